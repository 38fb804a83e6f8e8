package tpch

import (
	"bytes"
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/analytic"
	"github.com/pgarena/pgarena/internal/workload/tpch/dbgen"
)

// seqWorker runs a fixed list of queries and refresh functions once, then
// ends (Do returns workload.ErrStopped): the power test's stream (RF1, the
// 22 queries, RF2) and the throughput test's refresh stream.
type seqWorker struct {
	w        *Workload
	set      analytic.Set // queries by TxType (q1 is 0)
	seq      []workload.TxType
	rf1, rf2 workload.TxType // the refresh functions' types
	next     int
}

// powerWorker is the power test's stream (Clause 5.3.3): RF1, stream 0's
// queries in its order, RF2; types as the whole workload's.
func (w *Workload) powerWorker() *seqWorker {
	set, order := w.streamSet(0)
	seq := []workload.TxType{txRF1}
	for _, i := range order {
		seq = append(seq, workload.TxType(i))
	}
	return &seqWorker{w: w, set: set, seq: append(seq, txRF2), rf1: txRF1, rf2: txRF2}
}

// refreshWorker is the throughput test's refresh stream (Clause 5.3.4):
// one RF1/RF2 pair per query stream.
func (w *Workload) refreshWorker(rf1, rf2 workload.TxType) *seqWorker {
	var seq []workload.TxType
	for range w.streams {
		seq = append(seq, rf1, rf2)
	}
	return &seqWorker{w: w, seq: seq, rf1: rf1, rf2: rf2}
}

// Len implements workload.Lister: the list's length.
func (s *seqWorker) Len() int { return len(s.seq) }

// Next implements workload.Worker.
func (s *seqWorker) Next() workload.TxType {
	s.next++
	if s.next > len(s.seq) {
		return s.seq[len(s.seq)-1]
	}
	return s.seq[s.next-1]
}

// Do implements workload.Worker.
func (s *seqWorker) Do(ctx context.Context, conn *pgx.Conn, tx workload.TxType) error {
	var err error
	switch {
	case s.next > len(s.seq):
		return workload.ErrStopped
	case tx == s.rf1:
		err = s.w.RF1(ctx, conn)
	case tx == s.rf2:
		err = s.w.RF2(ctx, conn)
	case int(tx) < len(s.set):
		return analytic.Run(ctx, conn, s.set[tx])
	default:
		return fmt.Errorf("tpch: transaction type %d is not in this stream", tx)
	}
	if err != nil {
		workload.EndFailed(ctx, conn)
	}
	return err
}

// claimSet takes the next refresh set of column (rf1_next, rf2_next) in
// the transaction open on conn: a set is used once, whatever the runs.
func claimSet(ctx context.Context, conn *pgx.Conn, column string) (int, error) {
	var n int
	err := conn.QueryRow(ctx, "update "+stateTable+" set "+column+" = "+column+" + 1 returning "+column+" - 1").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("claim a refresh set: %w", err)
	}
	return n, nil
}

// RF1 is the new-sales refresh function (Clause 2.5.2): it inserts the
// orders and lineitems of the next refresh set (dbgen -U), in one
// transaction that claims the set.
func (w *Workload) RF1(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	var set int
	set, err = claimSet(ctx, conn, "rf1_next")
	if err != nil {
		return err
	}
	data, err := w.refreshData(set)
	if err != nil {
		return fmt.Errorf("rf1: %w", err)
	}
	for _, c := range []struct {
		table string
		data  []byte
	}{{"orders", data.orders}, {"lineitem", data.lines}} {
		if _, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(c.data), "copy "+c.table+" from stdin with (format text, delimiter '|')"); err != nil {
			return fmt.Errorf("rf1: set %d into %s: %w", set, c.table, err)
		}
	}
	return tx.Commit(ctx)
}

// RF2 is the old-sales refresh function (Clause 2.5.3): it deletes the
// orders of the next refresh set and their lineitems, in one transaction
// that claims the set.
func (w *Workload) RF2(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	var set int
	set, err = claimSet(ctx, conn, "rf2_next")
	if err != nil {
		return err
	}
	keys := w.generator().DeleteKeys(set)
	if keys == nil {
		return fmt.Errorf("rf2: no refresh set %d at scale %g (dbgen has %d sets of SF × 1500 orders): init again", set, w.scale, w.generator().BaseRows(dbgen.Orders)/max(1, int64(w.scale*1500)))
	}
	if _, err := conn.Exec(ctx, "delete from lineitem where l_orderkey = any($1)", keys); err != nil {
		return fmt.Errorf("rf2: set %d: %w", set, err)
	}
	if _, err := conn.Exec(ctx, "delete from orders where o_orderkey = any($1)", keys); err != nil {
		return fmt.Errorf("rf2: set %d: %w", set, err)
	}
	return tx.Commit(ctx)
}

// refreshSet is RF1's data of one refresh set, as COPY text.
type refreshSet struct{ orders, lines []byte }

// maxPregenerated bounds the refresh data Prepare generates ahead (dbgen
// -U makes the update files before the test, so generating them is not
// RF1's time): 1,500 × SF orders a set, about 1 MB at scale 1.
const maxPregenerated = 256 << 20

// pregenerate makes the refresh sets a run of the workload's mode will
// take, from first on: one for the power test, --streams for the
// throughput test. Sets beyond maxPregenerated are made by RF1 itself.
func (w *Workload) pregenerate(first int) error {
	n := 0
	if w.power {
		n = 1
	}
	if w.throughput {
		n += w.streams
	}
	size := 0
	for set := first; set < first+n && size < maxPregenerated; set++ {
		d, err := w.refreshData(set)
		if err != nil {
			return err
		}
		size += len(d.orders) + len(d.lines)
	}
	return nil
}

// refreshData returns set's data, generated on first use and kept.
func (w *Workload) refreshData(set int) (refreshSet, error) {
	w.refreshMu.Lock()
	defer w.refreshMu.Unlock()
	if d, ok := w.refresh[set]; ok {
		return d, nil
	}
	var orders, lines bytes.Buffer
	if _, _, err := w.generator().WriteRefresh(&orders, &lines, set, dbgen.COPY); err != nil {
		return refreshSet{}, fmt.Errorf("generate refresh set %d: %w", set, err)
	}
	if w.refresh == nil {
		w.refresh = map[int]refreshSet{}
	}
	d := refreshSet{orders.Bytes(), lines.Bytes()}
	w.refresh[set] = d
	return d, nil
}
