package dbgen

import (
	"fmt"
	"io"
)

// Refresh data (Clause 2.5 and 4.2.4; dbgen -U). Update set n (1-based) holds R = SF × 1500
// orders. As dbgen's driver does, set n takes the order indexes (n−1)·R+1 .. n·R:
//   - RF1 inserts orders with those indexes keyed in the sparse key gaps (mk_sparse's seq
//     1 + n/1000, never 0), with values drawn from the random streams past the base data
//     (dbgen's set_state to "rows beyond SF", then (n−1)·R rows further), and their lines;
//   - RF2 deletes the base orders of the same indexes (delete.n: seq n/1000, 0 below 1000).
//
// So new keys never meet loaded keys nor another set's, and every deleted key was loaded.
// Sets run from 1 to 999: at set 1000 dbgen's delete keys would leave the loaded ones.

const (
	updatePercent = 10 // dbgen's UPD_PCT
	maxRefreshSet = 999
)

// refreshRows is dbgen's rows per update set: (ORDERS base / 10000) × SF × UPD_PCT.
func (g *Generator) refreshRows() int64 {
	return int64(float64(ordersBase/10000) * g.sf * updatePercent)
}

// refreshSets is how many update sets exist: their deletes must name loaded orders.
func (g *Generator) refreshSets() int {
	r := g.refreshRows()
	if r == 0 {
		return 0
	}
	return int(min(g.BaseRows(Orders)/r, maxRefreshSet))
}

func (g *Generator) refreshRange(n int) (orderRange, error) {
	if err := g.checkScale(); err != nil {
		return orderRange{}, err
	}
	if n < 1 || n > g.refreshSets() {
		return orderRange{}, fmt.Errorf("dbgen: update set %d out of range [1, %d] at scale %g", n, g.refreshSets(), g.sf)
	}
	r := g.refreshRows()
	first := int64(n-1) * r
	return orderRange{first: first, count: r, seq: 1 + int64(n)/(10000/updatePercent), at: g.BaseRows(Orders) + first}, nil
}

// WriteRefresh writes RF1's new orders and their lineitems for set n.
func (g *Generator) WriteRefresh(orders, lineitem io.Writer, n int, f Format) (nOrders, nLines int64, err error) {
	r, err := g.refreshRange(n)
	if err != nil {
		return 0, 0, err
	}
	lw := newLineWriter(orders, f)
	g.writeOrders(lw, r)
	lw.flush()
	if lw.err != nil {
		return lw.lines, 0, lw.err
	}
	ll := newLineWriter(lineitem, f)
	g.writeLineItems(ll, r)
	ll.flush()
	return lw.lines, ll.lines, ll.err
}

// DeleteKeys returns RF2's order keys for set n (dbgen's delete.n), or nil if there is no
// set n at this scale.
func (g *Generator) DeleteKeys(n int) []int64 {
	r, err := g.refreshRange(n)
	if err != nil {
		return nil
	}
	seq := int64(n) / (10000 / updatePercent)
	keys := make([]int64, 0, r.count)
	for i := r.first + 1; i <= r.first+r.count; i++ {
		keys = append(keys, sparseKey(i, seq))
	}
	return keys
}
