package tpcc

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/randgen"
	"github.com/pgarena/pgarena/internal/workload"
)

// deckSize and the counts per type give the 45/43/4/4/4 mix. Clause
// 5.2.4.2 allows a deck of cards shuffled after each pass; the minimum
// shares of clause 5.2.3 (payment 43%, the others 4% each) are met
// exactly, new-order takes the rest.
const deckSize = 100

var deckCounts = [...]int{txNewOrder: 45, txPayment: 43, txOrderStatus: 4, txDelivery: 4, txStockLevel: 4}

// worker is one terminal (clause 2.1.1 / 5.2): a home warehouse and, for
// stock-level, a fixed district.
type worker struct {
	w     *Workload
	rng   *rand.Rand
	c     constants
	homeW int
	homeD int
	deck  []workload.TxType
	pos   int
}

func newWorker(w *Workload, id int, rng *rand.Rand) *worker {
	return newDeckWorker(w, id, rng, deckCounts)
}

// newDeckWorker is a terminal dealing from a deck with counts cards of
// each type (a part of the mix, for workload.ReadOnlySplitter).
func newDeckWorker(w *Workload, id int, rng *rand.Rand, counts [len(deckCounts)]int) *worker {
	n := 0
	for _, c := range counts {
		n += c
	}
	wk := &worker{
		w:     w,
		rng:   rng,
		c:     w.constants(),
		homeW: id%w.warehouses + 1,
		homeD: id/w.warehouses%districtsPerWH + 1,
		pos:   n,
		deck:  make([]workload.TxType, 0, n),
	}
	for tx, c := range counts {
		for range c {
			wk.deck = append(wk.deck, workload.TxType(tx))
		}
	}
	return wk
}

// Next implements workload.Worker: the next card of the deck, shuffled
// again after each pass.
func (wk *worker) Next() workload.TxType {
	if wk.pos == len(wk.deck) {
		wk.rng.Shuffle(len(wk.deck), func(i, j int) { wk.deck[i], wk.deck[j] = wk.deck[j], wk.deck[i] })
		wk.pos = 0
	}
	tx := wk.deck[wk.pos]
	wk.pos++
	return tx
}

// Do implements workload.Worker. On error the transaction has been rolled
// back, or the connection closed if that failed.
func (wk *worker) Do(ctx context.Context, conn *pgx.Conn, tx workload.TxType) error {
	var err error
	switch tx {
	case txNewOrder:
		err = wk.newOrder(ctx, conn)
	case txPayment:
		err = wk.payment(ctx, conn)
	case txOrderStatus:
		err = wk.orderStatus(ctx, conn)
	case txDelivery:
		err = wk.delivery(ctx, conn)
	case txStockLevel:
		err = wk.stockLevel(ctx, conn)
	default:
		return fmt.Errorf("tpcc: unknown transaction type %d", tx)
	}
	if err != nil {
		workload.EndFailed(ctx, conn)
		return fmt.Errorf("%s: %w", txNames[tx], err)
	}
	return nil
}

// warehouse returns the warehouse of the next transaction: the terminal's
// home, or a random one with --all-warehouses.
func (wk *worker) warehouse() int {
	if wk.w.allWarehouses {
		return 1 + wk.rng.IntN(wk.w.warehouses)
	}
	return wk.homeW
}

// district returns a random district number in [1, 10].
func (wk *worker) district() int { return 1 + wk.rng.IntN(districtsPerWH) }

// otherWarehouse returns a random warehouse other than w (clause 2.4.1.5,
// 2.5.1.2), or w when there is only one.
func (wk *worker) otherWarehouse(w int) int {
	if wk.w.warehouses == 1 {
		return w
	}
	o := 1 + wk.rng.IntN(wk.w.warehouses-1)
	if o >= w {
		o++
	}
	return o
}

// customerID draws NURand(1023, 1, 3000) (clause 2.4.1.2).
func (wk *worker) customerID() int {
	return int(randgen.NURand(wk.rng, 1023, 1, customersPerDistrict, wk.c.cID))
}

// customerLast draws a last name with NURand(255, 0, 999) and the run's C
// (clause 2.5.1.2, 2.6.1.2).
func (wk *worker) customerLast() string {
	return lastName(randgen.NURand(wk.rng, 255, 0, 999, wk.c.cLastRun))
}

// customersByLast lists the ids of the customers with a last name in
// C_FIRST order (clause 2.5.2.2, 2.6.2.2).
const customersByLast = `select c_id from customer where c_w_id = $1 and c_d_id = $2 and c_last = $3 order by c_first`

// middleCustomer reads the result of customersByLast from a batch and
// returns the id at position ceil(n/2).
func middleCustomer(br pgx.BatchResults, w, d int, last string) (int, error) {
	rows, err := br.Query()
	if err != nil {
		return 0, fmt.Errorf("customers by last name: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return 0, fmt.Errorf("customers by last name: %w", err)
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in warehouse %d district %d", last, w, d)
	}
	return int(ids[(len(ids)+1)/2-1]), nil
}
