package dbgen

import (
	"fmt"
	"strings"
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
// is built once, on first use (once per process: it does not depend on the scale factor).
type Generator struct {
	sf float64
}

// New returns the generator of scale factor sf, from 0.0001 to below 30000 (fractional
// scales are for tests); Write and the refresh methods reject other scales.
func New(sf float64) *Generator { return &Generator{sf: sf} }

// Scale is the scale factor.
func (g *Generator) Scale() float64 { return g.sf }

func (g *Generator) textPool() *textPool { return sharedPool.Get() }
