package driver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/workload"
)

// pacedWorkload is the sleep workload with fixed keying and think times
// (workload.Pacer on its workers).
type pacedWorkload struct {
	sleepWorkload
	keying, thinking time.Duration
}

func (p *pacedWorkload) NewWorker(id int, _ *rand.Rand) workload.Worker {
	return &pacedWorker{sleepWorker: sleepWorker{w: &p.sleepWorkload, id: id}, p: p}
}

type pacedWorker struct {
	sleepWorker
	p *pacedWorkload
}

func (w *pacedWorker) Pauses(workload.TxType) (time.Duration, time.Duration) {
	return w.p.keying, w.p.thinking
}

func TestPacingPausesAndLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Each client: 50 ms keying, 1 ms transaction, 50 ms thinking, so
		// transaction k runs from 50 + 101·k ms to 51 + 101·k ms: 10 in one
		// second, one in each 100 ms interval.
		clk := clock.NewFake(fakeStart)
		w := &pacedWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond, clk: clk}, keying: 50 * time.Millisecond, thinking: 50 * time.Millisecond}
		res, col, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 3, Duration: time.Second, Tick: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ok, failed, _, _ := col.total()
		if ok != 30 || failed != 0 {
			t.Fatalf("committed %d failed %d, want 30 (3 clients × 10) and 0", ok, failed)
		}
		// The run ends at once: every client is thinking at 1 s.
		if d := res.End.Sub(res.Start); d != time.Second {
			t.Fatalf("run lasted %s, want 1s", d)
		}
		for i, iv := range col.ivs {
			tot := iv.Total()
			if i >= 10 {
				// The tick at 1 s and the end may both cut an interval:
				// the second one is empty.
				if tot.Count != 0 || iv.Duration() != 0 {
					t.Fatalf("interval %d after the end: %d transactions over %s", i+1, tot.Count, iv.Duration())
				}
				continue
			}
			if tot.Count != 3 {
				t.Fatalf("interval %d: %d transactions, want 3", i+1, tot.Count)
			}
			// Latency is the transaction's own time: neither pause is in it.
			if !exactly(tot.Latency, 1000) {
				t.Fatalf("interval %d: latency %d..%dµs, want 1000 (the transaction alone)", i+1, tot.Latency.Min(), tot.Latency.Max())
			}
		}
	})
}

func TestPacingStopsPromptly(t *testing.T) {
	for _, tc := range []struct {
		name             string
		keying, thinking time.Duration
		cancel           bool
		want             int64
	}{
		// Every client does one transaction, then thinks for an hour.
		{"think/end", 0, time.Hour, false, 4},
		{"think/cancel", 0, time.Hour, true, 4},
		// Every client keys for an hour: nothing starts.
		{"keying/end", time.Hour, 0, false, 0},
		{"keying/cancel", time.Hour, 0, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.NewFake(fakeStart)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				cfg := Config{Clients: 4, Duration: 200 * time.Millisecond, Tick: 50 * time.Millisecond}
				if tc.cancel {
					cfg.Duration = time.Hour
					at(clk, 200*time.Millisecond, cancel)
				}
				w := &pacedWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond, clk: clk}, keying: tc.keying, thinking: tc.thinking}
				res, col, err := stepped(t, ctx, clk, w, nilDialer, cfg)
				if err != nil {
					t.Fatal(err)
				}
				// At 200 ms exactly: not after the drain (10 s) nor the
				// abandon deadline; the pauses end with the run.
				if d := res.End.Sub(res.Start); d != 200*time.Millisecond || res.Abandoned != 0 {
					t.Fatalf("run took %s, abandoned %d", d, res.Abandoned)
				}
				if res.Stopped != tc.cancel {
					t.Fatalf("stopped %v, want %v", res.Stopped, tc.cancel)
				}
				ok, failed, _, _ := col.total()
				if ok != tc.want || failed != 0 {
					t.Fatalf("committed %d failed %d, want %d and 0", ok, failed, tc.want)
				}
			})
		})
	}
}

func TestPacingNoThinkAfterLastTransaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// -t 2: keying (0-10 ms), tx (10-11), think (11-31), keying
		// (31-41), tx (41-42), and the run ends.
		clk := clock.NewFake(fakeStart)
		w := &pacedWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond, clk: clk}, keying: 10 * time.Millisecond, thinking: 20 * time.Millisecond}
		res, col, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 2, Transactions: 2, Tick: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if ok, _, _, _ := col.total(); ok != 4 || res.End.Sub(res.Start) != 42*time.Millisecond {
			t.Fatalf("committed %d in %s, want 4 in 42ms", ok, res.End.Sub(res.Start))
		}
		// No hour of thinking after the last transaction.
		w.thinking = time.Hour
		clk = clock.NewFake(fakeStart)
		w.clk = clk
		res, col, err = stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 2, Transactions: 1, Tick: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if ok, _, _, _ := col.total(); ok != 2 || res.End.Sub(res.Start) != 11*time.Millisecond {
			t.Fatalf("committed %d in %s, want 2 in 11ms", ok, res.End.Sub(res.Start))
		}
	})
}

func TestOpenLoopIgnoresPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var notes []string
		clk := clock.NewFake(fakeStart)
		w := &pacedWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond, clk: clk}, keying: time.Hour, thinking: time.Hour}
		// Arrivals every 10 ms up to 300 ms; the schedule lasts 305 ms so
		// that the last arrival is not due at the very instant the run ends.
		res, col, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 2, Tick: 50 * time.Millisecond,
			Schedule: mustSchedule(t, "const(100,305ms)"), Arrival: ArrivalUniform,
			Notef: func(f string, a ...any) { mu.Lock(); notes = append(notes, fmt.Sprintf(f, a...)); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		// Every arrival served at once, without pauses: the last one ends
		// at 301 ms, when the run does (its queue is closed and empty).
		ok, _, _, _ := col.total()
		if ok != 30 || res.Unstarted != 0 || res.End.Sub(res.Start) != 301*time.Millisecond {
			t.Fatalf("committed %d (unstarted %d) in %s, want 30 arrivals served without pauses in 301ms", ok, res.Unstarted, res.End.Sub(res.Start))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(notes) != 1 || !strings.Contains(notes[0], "think times") {
			t.Fatalf("notes %q, want one about ignored keying and think times", notes)
		}
	})
}
