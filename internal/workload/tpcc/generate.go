package tpcc

import (
	"math/big"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/randgen"
	"github.com/pgarena/pgarena/internal/workload"
)

// loadTime is the "current date and time" of the initial data (clause
// 4.3.3.1: C_SINCE, H_DATE, O_ENTRY_D): a fixed instant, so that the data
// is a pure function of the seed.
var loadTime = lazy.Value[time.Time]{New: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }}

// itemsPerBatch splits item and each warehouse's stock into batches.
const itemsPerBatch = 10000

// Table ids mixed into the seed of each batch's generator.
const (
	tabWarehouse = iota + 1
	tabDistrict
	tabCustomer
	tabHistory
	tabOrders
	tabOrderLine
	tabItem
	tabStock
	tabOLCount // the O_OL_CNT stream orders and order_line share
)

// generator makes the initial data of clause 4.3.3.1. Every batch draws
// from its own generator seeded by (seed, table, batch), so a batch is a
// pure function of those.
//
// A slice (--warehouse-range) generates the rows of warehouses first..last
// only, the same rows a whole load makes for them; item belongs to the
// slice that holds warehouse 1.
type generator struct {
	seed        uint64
	first, last int // warehouses of the load (1..W, or the slice)
	c           constants
}

// count is the number of warehouses the generator makes.
func (g *generator) count() int { return g.last - g.first + 1 }

func (g *generator) rng(table, batch int) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed, uint64(table)<<40|uint64(batch)))
}

// numeric returns n × 10^exp as a NUMERIC value.
func numeric(n int64, exp int32) pgtype.Numeric {
	return pgtype.Numeric{Int: big.NewInt(n), Exp: exp, Valid: true}
}

// rows returns dst[:n] with every row a slice of width values, reusing
// what dst holds.
func rows(dst [][]any, n, width int) [][]any {
	if cap(dst) < n {
		dst = append(dst[:cap(dst)], make([][]any, n-cap(dst))...)
	}
	dst = dst[:n]
	for i := range dst {
		if cap(dst[i]) < width {
			dst[i] = make([]any, width)
		}
		dst[i] = dst[i][:width]
	}
	return dst
}

// perDistrict makes Batches with one batch per (warehouse, district):
// batch b is warehouse first + b/10, district b%10+1.
func (g *generator) perDistrict(rowsPer int64, fill func(w, d int, dst [][]any) [][]any) workload.Batches {
	n := g.count() * districtsPerWH
	return workload.Batches{
		N:    n,
		Rows: int64(n) * rowsPer,
		Fill: func(i int, dst [][]any) [][]any {
			return fill(g.first+i/districtsPerWH, i%districtsPerWH+1, dst)
		},
	}
}

// warehouseRows: clause 4.3.3.1, one row per warehouse, one batch.
func (g *generator) warehouseRows() workload.Batches {
	return workload.Batches{N: 1, Rows: int64(g.count()), Fill: func(_ int, dst [][]any) [][]any {
		dst = rows(dst, g.count(), 9)
		for i, r := range dst {
			w := g.first + i
			rng := g.rng(tabWarehouse, w-1)
			r[0] = int32(w)
			r[1] = numeric(30000000, -2) // W_YTD = 300,000.00
			r[2] = numeric(randgen.Uniform(rng, 0, 2000), -4)
			r[3] = aString(rng, 6, 10)
			r[4], r[5], r[6] = aString(rng, 10, 20), aString(rng, 10, 20), aString(rng, 10, 20)
			r[7], r[8] = state(rng), zip(rng)
		}
		return dst
	}}
}

// districtRows: clause 4.3.3.1, 10 per warehouse, one batch.
func (g *generator) districtRows() workload.Batches {
	n := g.count() * districtsPerWH
	return workload.Batches{N: 1, Rows: int64(n), Fill: func(_ int, dst [][]any) [][]any {
		dst = rows(dst, n, 11)
		var rng *rand.Rand
		for i, r := range dst {
			if i%districtsPerWH == 0 {
				rng = g.rng(tabDistrict, g.first+i/districtsPerWH-1)
			}
			r[0] = int16(i%districtsPerWH + 1)
			r[1] = int32(g.first + i/districtsPerWH)
			r[2] = numeric(3000000, -2) // D_YTD = 30,000.00
			r[3] = numeric(randgen.Uniform(rng, 0, 2000), -4)
			r[4] = int32(ordersPerDistrict + 1) // D_NEXT_O_ID = 3001
			r[5] = aString(rng, 6, 10)
			r[6], r[7], r[8] = aString(rng, 10, 20), aString(rng, 10, 20), aString(rng, 10, 20)
			r[9], r[10] = state(rng), zip(rng)
		}
		return dst
	}}
}

// customerRows: clause 4.3.3.1, 3,000 per district. C_LAST of customers
// 1..1000 is lastName(c_id-1), of the others lastName(NURand(255, 0, 999))
// with the load's C (clause 4.3.2.3); 10% have bad credit.
func (g *generator) customerRows() workload.Batches {
	return g.perDistrict(customersPerDistrict, func(w, d int, dst [][]any) [][]any {
		rng := g.rng(tabCustomer, (w-1)*districtsPerWH+d-1)
		dst = rows(dst, customersPerDistrict, 21)
		for i, r := range dst {
			cid := int64(i + 1)
			r[0], r[1], r[2] = int32(cid), int16(d), int32(w)
			r[3], r[4] = aString(rng, 8, 16), "OE"
			if cid <= 1000 {
				r[5] = lastName(cid - 1)
			} else {
				r[5] = lastName(randgen.NURand(rng, 255, 0, 999, g.c.cLastLoad))
			}
			r[6], r[7], r[8] = aString(rng, 10, 20), aString(rng, 10, 20), aString(rng, 10, 20)
			r[9], r[10], r[11] = state(rng), zip(rng), nString(rng, 16)
			r[12] = loadTime.Get()
			r[13] = "GC"
			if rng.IntN(10) == 0 {
				r[13] = "BC"
			}
			r[14] = numeric(5000000, -2) // C_CREDIT_LIM = 50,000.00
			r[15] = numeric(randgen.Uniform(rng, 0, 5000), -4)
			r[16] = numeric(-1000, -2) // C_BALANCE = -10.00
			r[17] = numeric(1000, -2)  // C_YTD_PAYMENT = 10.00
			r[18], r[19] = int32(1), int32(0)
			r[20] = aString(rng, 300, 500)
		}
		return dst
	})
}

// historyRows: clause 4.3.3.1, one per customer.
func (g *generator) historyRows() workload.Batches {
	return g.perDistrict(customersPerDistrict, func(w, d int, dst [][]any) [][]any {
		rng := g.rng(tabHistory, (w-1)*districtsPerWH+d-1)
		dst = rows(dst, customersPerDistrict, 8)
		for i, r := range dst {
			r[0], r[1], r[2], r[3], r[4] = int32(i+1), int16(d), int32(w), int16(d), int32(w)
			r[5] = loadTime.Get()
			r[6] = numeric(1000, -2) // H_AMOUNT = 10.00
			r[7] = aString(rng, 12, 24)
		}
		return dst
	})
}

// olCounts returns O_OL_CNT (random in [5, 15]) of the 3,000 orders of a
// district, from a stream of its own that orderRows and orderLineRows
// share.
func (g *generator) olCounts(w, d int) *[ordersPerDistrict]int8 {
	rng := g.rng(tabOLCount, (w-1)*districtsPerWH+d-1)
	var n [ordersPerDistrict]int8
	for i := range n {
		n[i] = int8(5 + rng.IntN(11))
	}
	return &n
}

// orderRows: clause 4.3.3.1, 3,000 per district; O_C_ID is a random
// permutation of [1, 3000]; orders before 2101 are delivered (a carrier),
// the others are not (NULL).
func (g *generator) orderRows() workload.Batches {
	return g.perDistrict(ordersPerDistrict, func(w, d int, dst [][]any) [][]any {
		rng := g.rng(tabOrders, (w-1)*districtsPerWH+d-1)
		perm := rng.Perm(customersPerDistrict)
		cnt := g.olCounts(w, d)
		dst = rows(dst, ordersPerDistrict, 8)
		for i, r := range dst {
			oid := i + 1
			r[0], r[1], r[2], r[3] = int32(oid), int32(w), int16(d), int32(perm[i]+1)
			r[4] = nil
			if oid < firstNewOrder {
				r[4] = int16(1 + rng.IntN(10))
			}
			r[5], r[6], r[7] = int16(cnt[i]), int16(1), loadTime.Get()
		}
		return dst
	})
}

// orderLineRows: clause 4.3.3.1, O_OL_CNT per order (10 on average);
// delivered lines have a delivery date and amount 0.00, undelivered ones
// none and an amount in [0.01, 9999.99]. Batches differ in size; Rows is
// the expectation (10 lines per order), for progress only.
func (g *generator) orderLineRows() workload.Batches {
	zero := numeric(0, -2)
	return g.perDistrict(ordersPerDistrict*10, func(w, d int, dst [][]any) [][]any {
		rng := g.rng(tabOrderLine, (w-1)*districtsPerWH+d-1)
		cnt := g.olCounts(w, d)
		total := 0
		for _, c := range cnt {
			total += int(c)
		}
		dst = rows(dst, total, 10)
		k := 0
		for o := range ordersPerDistrict {
			oid := o + 1
			for n := 1; n <= int(cnt[o]); n++ {
				r := dst[k]
				k++
				r[0], r[1], r[2], r[3] = int32(w), int16(d), int32(oid), int16(n)
				r[4] = int32(1 + rng.IntN(numItems))
				if oid < firstNewOrder {
					r[5], r[6] = loadTime.Get(), zero
				} else {
					r[5], r[6] = nil, numeric(randgen.Uniform(rng, 1, 999999), -2)
				}
				r[7], r[8] = int32(w), int16(5)
				r[9] = aString(rng, 24, 24)
			}
		}
		return dst
	})
}

// newOrderRows: clause 4.3.3.1, orders 2101..3000 of every district.
func (g *generator) newOrderRows() workload.Batches {
	return g.perDistrict(newOrdersPerDistrict, func(w, d int, dst [][]any) [][]any {
		dst = rows(dst, newOrdersPerDistrict, 3)
		for i, r := range dst {
			r[0], r[1], r[2] = int32(w), int16(d), int32(firstNewOrder+i)
		}
		return dst
	})
}

// itemRows: clause 4.3.3.1, 100,000 items in 10 batches, loaded once (by
// the slice holding warehouse 1).
func (g *generator) itemRows() workload.Batches {
	if g.first != 1 {
		return workload.Batches{}
	}
	return workload.Batches{N: numItems / itemsPerBatch, Rows: numItems, Fill: func(b int, dst [][]any) [][]any {
		rng := g.rng(tabItem, b)
		dst = rows(dst, itemsPerBatch, 5)
		for i, r := range dst {
			r[0] = int32(b*itemsPerBatch + i + 1)
			r[1] = int32(1 + rng.IntN(10000))
			r[2] = aString(rng, 14, 24)
			r[3] = numeric(randgen.Uniform(rng, 100, 10000), -2)
			r[4] = dataString(rng)
		}
		return dst
	}}
}

// stockRows: clause 4.3.3.1, 100,000 per warehouse in batches of 10,000.
func (g *generator) stockRows() workload.Batches {
	per := numItems / itemsPerBatch
	return workload.Batches{N: g.count() * per, Rows: int64(g.count()) * numItems, Fill: func(b int, dst [][]any) [][]any {
		b += (g.first - 1) * per // the batch number of a whole load
		rng := g.rng(tabStock, b)
		w, first := b/per+1, (b%per)*itemsPerBatch+1
		dst = rows(dst, itemsPerBatch, 17)
		for i, r := range dst {
			r[0], r[1] = int32(first+i), int32(w)
			r[2] = int16(10 + rng.IntN(91))
			for k := 3; k < 13; k++ {
				r[k] = aString(rng, 24, 24)
			}
			r[13], r[14], r[15] = int32(0), int32(0), int32(0)
			r[16] = dataString(rng)
		}
		return dst
	}}
}
