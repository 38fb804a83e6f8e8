// Package dbgen is a STUB standing in for branch tpch-dbgen while it has no
// commits (the workload helper deletes this file when merging): the API of
// notes/tpch-api.md with simple, type-valid rows, NOT dbgen's data.
package dbgen

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

type Table int

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

var Tables = []Table{Nation, Region, Part, Supplier, PartSupp, Customer, Orders, LineItem}

var names = []string{"nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"}

func (t Table) String() string { return names[t] }

func ParseTable(s string) (Table, error) {
	for i, n := range names {
		if n == s {
			return Table(i), nil
		}
	}
	return 0, fmt.Errorf("unknown table %q", s)
}

type Format int

const (
	TBL Format = iota
	COPY
)

type Generator struct{ sf float64 }

func New(sf float64) *Generator     { return &Generator{sf} }
func (g *Generator) Scale() float64 { return g.sf }

func (g *Generator) n(base float64) int64 { return max(1, int64(math.Round(base*g.sf))) }

func (g *Generator) BaseRows(t Table) int64 {
	switch t {
	case Nation:
		return 25
	case Region:
		return 5
	case Part, PartSupp:
		return g.n(200000)
	case Supplier:
		return g.n(10000)
	case Customer:
		return g.n(150000)
	default:
		return g.n(1500000)
	}
}

func orderKey(i int64) int64 { return (i>>3)<<5 | i&7 }

func (g *Generator) Write(w io.Writer, t Table, from, to int64, f Format) (int64, error) {
	var b []byte
	var n int64
	end := func() {
		if f == TBL {
			b = append(b, '|')
		}
		b = append(b, '\n')
		n++
	}
	for i := from; i < to; i++ {
		k := i + 1
		ks := strconv.FormatInt(k, 10)
		switch t {
		case Nation:
			b = fmt.Appendf(b, "%d|NATION%d|%d|comment", i, i, i%5)
			end()
		case Region:
			b = fmt.Appendf(b, "%d|REGION%d|comment", i, i)
			end()
		case Part:
			b = fmt.Appendf(b, "%s|part %s|Manufacturer#1|Brand#12|STANDARD BRASS|%d|SM BOX|%d.00|c", ks, ks, k%50+1, 900+k%100)
			end()
		case Supplier:
			b = fmt.Appendf(b, "%s|Supplier#%09d|addr|%d|10-000-000-0000|100.00|c", ks, k, k%25)
			end()
		case PartSupp:
			s := g.BaseRows(Supplier)
			for j := int64(0); j < 4; j++ {
				b = fmt.Appendf(b, "%s|%d|%d|1.00|c", ks, (k+j*(s/4+(k-1)/s))%s+1, 100+j)
				end()
			}
		case Customer:
			b = fmt.Appendf(b, "%s|Customer#%09d|addr|%d|10-000-000-0000|100.00|BUILDING|c", ks, k, k%25)
			end()
		case Orders:
			c := k%g.BaseRows(Customer) + 1
			if c%3 == 0 {
				c--
			}
			b = fmt.Appendf(b, "%d|%d|O|100.00|1995-01-01|1-URGENT|Clerk#000000001|0|c", orderKey(k), c)
			end()
		case LineItem:
			for j := int64(1); j <= k%7+1; j++ {
				p := (k+j)%g.BaseRows(Part) + 1
				s := g.BaseRows(Supplier)
				b = fmt.Appendf(b, "%d|%d|%d|%d|1|100.00|0.05|0.01|N|O|1995-01-02|1995-01-03|1995-01-04|NONE|AIR|c",
					orderKey(k), p, (p+(j%4)*(s/4+(p-1)/s))%s+1, j)
				end()
			}
		}
	}
	_, err := w.Write(b)
	return n, err
}

func (g *Generator) WriteRefresh(orders, lineitem io.Writer, n int, f Format) (int64, int64, error) {
	cnt := max(1, g.BaseRows(Orders)/1000)
	var ob, lb []byte
	var lines int64
	for i := int64(0); i < cnt; i++ {
		k := orderKey(g.BaseRows(Orders)+int64(n-1)*cnt+i+1) + 8 // in a gap: low bits 8..15 never used
		k = k&^7 | 8 | k&7
		ob = fmt.Appendf(ob, "%d|1|O|100.00|1995-01-01|1-URGENT|Clerk#000000001|0|c\n", k)
		lb = fmt.Appendf(lb, "%d|1|2|1|1|100.00|0.05|0.01|N|O|1995-01-02|1995-01-03|1995-01-04|NONE|AIR|c\n", k)
		lines++
	}
	if _, err := orders.Write(ob); err != nil {
		return 0, 0, err
	}
	_, err := lineitem.Write(lb)
	return cnt, lines, err
}

func (g *Generator) DeleteKeys(n int) []int64 {
	cnt := max(1, g.BaseRows(Orders)/1000)
	var out []int64
	for i := int64(0); i < cnt; i++ {
		out = append(out, orderKey(int64(n-1)*cnt+i+1))
	}
	return out
}
