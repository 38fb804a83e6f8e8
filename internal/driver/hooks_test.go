package driver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/workload"
)

// hookedWorkload is the sleep workload whose transaction first pauses
// through the driver's Hooks.Sleep (a script's \sleep), then works: two
// commands, reported through Hooks.Step.
type hookedWorkload struct {
	sleepWorkload
	pause time.Duration
}

func (h *hookedWorkload) NewWorker(id int, _ *rand.Rand) workload.Worker {
	return &hookedWorker{sleepWorker: sleepWorker{w: &h.sleepWorkload, id: id}, pause: h.pause}
}

type hookedWorker struct {
	sleepWorker
	pause time.Duration
	hooks workload.Hooks
}

func (w *hookedWorker) SetHooks(h workload.Hooks) { w.hooks = h }

func (w *hookedWorker) Do(ctx context.Context, conn *pgx.Conn, tx workload.TxType) error {
	if !w.hooks.Sleep(w.pause) {
		return workload.ErrStopped
	}
	if w.hooks.Step != nil {
		w.hooks.Step(0)
	}
	if err := w.sleepWorker.Do(ctx, conn, tx); err != nil {
		return err
	}
	if w.hooks.Step != nil {
		w.hooks.Step(1)
	}
	return nil
}

// TestHooksSleepAndStatements: a pause inside a transaction is slept by
// the driver on its clock and counts in the latency (pgbench's \sleep);
// with StatementLatencies each command is timed between its Steps; a
// transaction in its pause when the measured time ends is unfinished and
// sleeps on in the drain.
func TestHooksSleepAndStatements(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(fakeStart)
		w := &hookedWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond, clk: clk}, pause: 9 * time.Millisecond}
		_, col, err := stepped(t, context.Background(), clk, w, nilDialer,
			Config{Clients: 1, Duration: 95 * time.Millisecond, Tick: 10 * time.Millisecond, StatementLatencies: true})
		if err != nil {
			t.Fatal(err)
		}
		ok, failed, _, _ := col.total()
		if ok != 9 || failed != 0 || col.unfinished().Committed != 1 {
			t.Fatalf("committed %d failed %d unfinished %+v, want 9 (10 ms each) and 0, the 10th unfinished in its pause at 95 ms and committed in the drain",
				ok, failed, col.unfinished())
		}
		var stmts [2]int64
		var n [2]int64
		for _, iv := range col.ivs {
			tot := iv.Total()
			if tot.Count > 0 && !exactly(tot.Latency, 10000) {
				t.Fatalf("latency %d..%dµs, want 10000 (the pause is in it)", tot.Latency.Min(), tot.Latency.Max())
			}
			for i, s := range iv.Tx[0].Statements {
				stmts[i] += s.SumNS
				n[i] += s.Count
			}
		}
		if n[0] != 10 || n[1] != 10 || stmts[0] != 10*int64(9*time.Millisecond) || stmts[1] != 10*int64(time.Millisecond) {
			t.Fatalf("statements: counts %v, sums %v ns; want 10 each (the drain's too), 10×9 ms and 10×1 ms", n, stmts)
		}
	})
}

// retryWorkload's transactions draw a value at their start and fail at
// command 1 with a serialization failure on two of every three attempts.
type retryWorkload struct {
	sleepWorkload
	worker *retryWorker // the only client's
}

func (r *retryWorkload) NewWorker(id int, _ *rand.Rand) workload.Worker {
	r.worker = &retryWorker{}
	return r.worker
}

type retryWorker struct {
	attempts, draw, drawn int
	retry                 bool
	retried               []int // the draws of the retried attempts
}

func (w *retryWorker) Next() workload.TxType { return 0 }
func (w *retryWorker) Retry()                { w.retry = true }

func (w *retryWorker) Do(context.Context, *pgx.Conn, workload.TxType) error {
	if w.retry {
		w.retry = false
		w.retried = append(w.retried, w.draw)
	} else {
		w.drawn++
		w.draw = w.drawn
	}
	w.attempts++
	if w.attempts%3 != 0 {
		return fmt.Errorf("script: %w", &workload.StatementError{Statement: 1, Err: &pgconn.PgError{Code: "40001", Message: "could not serialize access"}})
	}
	return nil
}

// TestRetryReplaysAndCountsPerCommand: before retrying a transaction the
// driver calls the Worker's Retry (workload.Retrier), and only then; with
// StatementLatencies a failure naming its command (workload.StatementError)
// counts at that command, as a retry or as a failure.
func TestRetryReplaysAndCountsPerCommand(t *testing.T) {
	w := &retryWorkload{}
	_, col, err := run(t, context.Background(), w, nilDialer, Config{Clients: 1, Transactions: 6, MaxTries: 2,
		Tick: 50 * time.Millisecond, StatementLatencies: true})
	if err != nil {
		t.Fatal(err)
	}
	// Attempts 1 F, 2 F (failed after 2 tries), 3 ok, 4 F, 5 F, 6 ok, ...:
	// each transaction is a failure or, on its first try, a commit.
	ok, failed, retries, _ := col.total()
	var fails, rets int64
	for _, iv := range col.ivs {
		for _, s := range iv.Tx[0].Statements {
			fails += s.Failures
			rets += s.Retries
		}
		if len(iv.Tx[0].Statements) > 0 && iv.Tx[0].Statements[0] != (metrics.StmtStat{}) {
			t.Errorf("command 0 has figures: %+v", iv.Tx[0].Statements[0])
		}
	}
	if ok+failed != 6 || fails != failed || rets != retries || retries == 0 || failed == 0 {
		t.Fatalf("ok %d failed %d retries %d; per command: failures %d retries %d", ok, failed, retries, fails, rets)
	}
	if int64(len(w.worker.retried)) != retries || w.worker.drawn != 6 {
		t.Fatalf("Retry before %d re-runs for %d retries; %d draws for 6 transactions", len(w.worker.retried), retries, w.worker.drawn)
	}
	for i, d := range w.worker.retried {
		if i > 0 && d == w.worker.retried[i-1] {
			t.Errorf("two retries of draw %d: a new transaction was taken for a retry", d)
		}
	}
}
