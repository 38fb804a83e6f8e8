package dbgen

import (
	"fmt"
	"io"
)

// Refresh data (Clause 2.5 and 4.2.4; dbgen -U). Update set n (1-based) holds SF × 1500
// orders: RF1 inserts them and their lines, RF2 deletes as many existing orders. As in
// dbgen, set n covers the order indexes (n−1)·R+1 .. n·R (R = SF × 1500): RF1's orders are
// generated from those indexes' random streams (positioned as dbgen -U positions them, from
// the start of the streams) but keyed in the sparse key gaps (mk_sparse's seq 1), and RF2
// deletes the base orders of the same indexes (seq 0). So new keys never meet loaded keys
// nor another set's, and every deleted key was loaded.

const updatePercent = 10 // dbgen's UPD_PCT

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
	return int(g.BaseRows(Orders) / r)
}

func (g *Generator) refreshRange(n int) (orderRange, error) {
	if n < 1 || n > g.refreshSets() {
		return orderRange{}, fmt.Errorf("dbgen: update set %d out of range [1, %d] at scale %g", n, g.refreshSets(), g.sf)
	}
	r := g.refreshRows()
	return orderRange{first: int64(n-1) * r, count: r, seq: 1 + int64(n)/(10000/updatePercent)}, nil
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
	seq := int64(n-1) / (10000 / updatePercent)
	keys := make([]int64, 0, r.count)
	for i := r.first + 1; i <= r.first+r.count; i++ {
		keys = append(keys, sparseKey(i, seq))
	}
	return keys
}
