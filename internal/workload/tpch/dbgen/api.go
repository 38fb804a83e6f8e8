package dbgen

import (
	"fmt"
	"strings"
	"sync"
)

// Table is one of the eight TPC-H tables (Clause 1.4).
type Table int

// The tables, in the order dbgen lists them.
const (
	Nation Table = iota
	Region
	Part
	Supplier
	PartSupp
	Customer
	Orders
	LineItem
)

// Tables lists every table.
var Tables = []Table{Nation, Region, Part, Supplier, PartSupp, Customer, Orders, LineItem}

var tableNames = [...]string{"nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"}

// String is the table's SQL name.
func (t Table) String() string {
	if t < 0 || int(t) >= len(tableNames) {
		return fmt.Sprintf("Table(%d)", int(t))
	}
	return tableNames[t]
}

// ParseTable maps a table's name (any case) to its Table.
func ParseTable(s string) (Table, error) {
	for i, n := range tableNames {
		if strings.EqualFold(s, n) {
			return Table(i), nil
		}
	}
	return 0, fmt.Errorf("unknown TPC-H table %q (want one of %s)", s, strings.Join(tableNames[:], ", "))
}

// Format is the line format written.
type Format int

const (
	// TBL is dbgen's format: fields separated by '|', with a trailing '|'.
	TBL Format = iota
	// COPY is TBL without the trailing '|': PostgreSQL's COPY text format with DELIMITER '|'.
	COPY
)

// Generator generates one scale factor's data. It is safe for concurrent use; the text pool
// is built once, on first use.
type Generator struct {
	sf       float64
	poolOnce sync.Once
	pool     *textPool
}

// New returns the generator of scale factor sf (> 0; fractional scales are for tests).
func New(sf float64) *Generator { return &Generator{sf: sf} }

// Scale is the scale factor.
func (g *Generator) Scale() float64 { return g.sf }

func (g *Generator) textPool() *textPool {
	g.poolOnce.Do(func() { g.pool = sharedPool() })
	return g.pool
}
