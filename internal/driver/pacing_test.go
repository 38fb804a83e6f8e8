package driver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

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
	// Each client: 50 ms keying, 1 ms transaction, 50 ms thinking, so a
	// transaction starts at 50 + 101·k ms: 10 in one second.
	w := &pacedWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond}, keying: 50 * time.Millisecond, thinking: 50 * time.Millisecond}
	_, col, err := run(t, context.Background(), w, nilDialer, Config{Clients: 3, Duration: time.Second, Tick: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ok, failed, _, _ := col.total()
	// Sleeps only ever run long: fewer on a loaded machine, never more.
	if ok < 18 || ok > 30 || failed != 0 {
		t.Fatalf("committed %d failed %d, want about 30 (3 clients × 10) and 0", ok, failed)
	}
	// Latency is the transaction's own time: neither pause is in it.
	var maxUS int64
	for _, iv := range col.ivs {
		tot := iv.Total()
		if tot.Count > 0 && tot.Latency.Max() > maxUS {
			maxUS = tot.Latency.Max()
		}
	}
	if maxUS < 1000 || maxUS >= 50000 {
		t.Fatalf("max latency %dµs: want at least the 1ms transaction and less than the 50ms keying time", maxUS)
	}
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
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := Config{Clients: 4, Duration: 200 * time.Millisecond, Tick: 50 * time.Millisecond}
			if tc.cancel {
				cfg.Duration = time.Hour
				time.AfterFunc(200*time.Millisecond, cancel)
			}
			w := &pacedWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond}, keying: tc.keying, thinking: tc.thinking}
			t0 := time.Now()
			res, col, err := run(t, ctx, w, nilDialer, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Not the drain (10 s) nor the abandon deadline: the pauses end
			// with the run.
			if d := time.Since(t0); d > 2*time.Second || res.Abandoned != 0 {
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
	}
}

func TestPacingNoThinkAfterLastTransaction(t *testing.T) {
	// -t 2: keying, tx, think, keying, tx, and the run ends (no hour of
	// thinking after the last one).
	w := &pacedWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond}, keying: 10 * time.Millisecond, thinking: 20 * time.Millisecond}
	_, col, err := run(t, context.Background(), w, nilDialer, Config{Clients: 2, Transactions: 2, Tick: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _, _ := col.total(); ok != 4 {
		t.Fatalf("committed %d, want 4", ok)
	}
	w.thinking = time.Hour
	t0 := time.Now()
	_, col, err = run(t, context.Background(), w, nilDialer, Config{Clients: 2, Transactions: 1, Tick: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _, _ := col.total(); ok != 2 || time.Since(t0) > 2*time.Second {
		t.Fatalf("committed %d in %s, want 2 at once", ok, time.Since(t0))
	}
}

func TestOpenLoopIgnoresPacing(t *testing.T) {
	var mu sync.Mutex
	var notes []string
	w := &pacedWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond}, keying: time.Hour, thinking: time.Hour}
	t0 := time.Now()
	_, col, err := run(t, context.Background(), w, nilDialer, Config{Clients: 2, Tick: 50 * time.Millisecond,
		Schedule: mustSchedule(t, "const(100,300ms)"), Arrival: ArrivalUniform,
		Notef: func(f string, a ...any) { mu.Lock(); notes = append(notes, fmt.Sprintf(f, a...)); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _, _ := col.total(); ok < 25 || ok > 31 || time.Since(t0) > 2*time.Second {
		t.Fatalf("committed %d in %s, want 30 arrivals served without pauses", ok, time.Since(t0))
	}
	mu.Lock()
	defer mu.Unlock()
	// Other notes may come (a slow machine leaves an arrival unstarted);
	// the one about pacing comes once.
	pacing := 0
	for _, n := range notes {
		if strings.Contains(n, "think times") {
			pacing++
		}
	}
	if pacing != 1 {
		t.Fatalf("notes %q, want one about ignored keying and think times", notes)
	}
}
