package tpcc

import (
	"math/rand/v2"

	"github.com/pgarena/pgarena/internal/workload"
)

// SplitReadOnly implements workload.ReadOnlySplitter: order-status and
// stock-level only read (clauses 2.6 and 2.8); new-order, payment and
// delivery write. Each part deals from a deck of its own types in the
// mix's proportions (4:4, and 45:43:4).
func (w *Workload) SplitReadOnly() (reads, writes workload.Workload, share float64) {
	var r, wr [len(deckCounts)]int
	r[txOrderStatus], r[txStockLevel] = deckCounts[txOrderStatus], deckCounts[txStockLevel]
	for tx, n := range deckCounts {
		wr[tx] = n - r[tx]
	}
	return &partOfMix{w, r}, &partOfMix{w, wr}, float64(r[txOrderStatus]+r[txStockLevel]) / deckSize
}

// partOfMix is the workload dealing only some of the mix's types; every
// other method (capabilities included) is the workload's own.
type partOfMix struct {
	*Workload
	counts [len(deckCounts)]int
}

// NewWorker implements workload.Workload.
func (p *partOfMix) NewWorker(id int, rng *rand.Rand) workload.Worker {
	return newDeckWorker(p.Workload, id, rng, p.counts)
}
