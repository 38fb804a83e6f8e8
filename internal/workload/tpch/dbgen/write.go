package dbgen

import (
	"fmt"
	"io"
)

// Write writes the lines generated from base rows [from, to) (0-based) of t to w and returns
// how many lines it wrote. A pure function of (sf, t, from, to): any split of [0, BaseRows)
// concatenates to the same bytes as one call.
func (g *Generator) Write(w io.Writer, t Table, from, to int64, f Format) (int64, error) {
	if n := g.BaseRows(t); from < 0 || to > n || from > to {
		return 0, fmt.Errorf("dbgen: rows [%d, %d) of %s out of range [0, %d)", from, to, t, n)
	}
	if err := g.checkScale(); err != nil {
		return 0, err
	}
	lw := newLineWriter(w, f)
	switch t {
	case Nation:
		g.writeNation(lw, from, to)
	case Region:
		g.writeRegion(lw, from, to)
	case Part:
		g.writePart(lw, from, to)
	case PartSupp:
		g.writePartSupp(lw, from, to)
	case Supplier:
		g.writeSupplier(lw, from, to)
	case Customer:
		g.writeCustomer(lw, from, to)
	case Orders:
		g.writeOrders(lw, baseOrders(from, to))
	case LineItem:
		g.writeLineItems(lw, baseOrders(from, to))
	default:
		return 0, fmt.Errorf("dbgen: unknown table %d", int(t))
	}
	lw.flush()
	return lw.lines, lw.err
}

// checkScale rejects scale factors dbgen cannot generate the same way: below 0.0001 there is
// no supplier; from 30000 on dbgen draws keys from a 64-bit generator this package lacks.
func (g *Generator) checkScale() error {
	if !(g.sf >= 0.0001 && g.sf < 30000) {
		return fmt.Errorf("dbgen: scale factor %g out of range [0.0001, 30000)", g.sf)
	}
	return nil
}
