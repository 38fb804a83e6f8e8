package driver

import (
	"context"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/clock"
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
// with StatementLatencies each command is timed between its Steps; a run
// ending during a pause counts that transaction neither done nor failed.
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
		if ok != 9 || failed != 0 {
			t.Fatalf("committed %d failed %d, want 9 (10 ms each, the 10th stopped in its pause) and 0", ok, failed)
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
		if n[0] != 9 || n[1] != 9 || stmts[0] != 9*int64(9*time.Millisecond) || stmts[1] != 9*int64(time.Millisecond) {
			t.Fatalf("statements: counts %v, sums %v ns; want 9 each, 9×9 ms and 9×1 ms", n, stmts)
		}
	})
}
