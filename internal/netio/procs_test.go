package netio

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestNextProcs(t *testing.T) {
	cases := []struct {
		cur, max int
		used     float64
		want     int
	}{
		{1, 2, 0.2, 1},  // clients waiting for the server: one P
		{1, 2, 0.8, 2},  // one P busy: more
		{1, 8, 0.9, 2},  // doubling
		{2, 8, 1.6, 4},  //
		{4, 8, 3.5, 8},  //
		{8, 8, 7.9, 8},  // at the maximum
		{1, 1, 0.99, 1}, // maximum 1
		{2, 2, 0.6, 2},  // one P would be 60% busy: keep two
		{2, 2, 0.4, 1},  // one is enough
		{8, 8, 2.0, 7},  // one at a time down
		{3, 8, 1.5, 3},  // hysteresis: neither up nor down
	}
	for _, c := range cases {
		if got := nextProcs(c.cur, c.max, c.used); got != c.want {
			t.Errorf("nextProcs(%d, %d, %.2f) = %d, want %d", c.cur, c.max, c.used, got, c.want)
		}
	}
}

// fakeProcs drives Procs with a fake clock, CPU time and GOMAXPROCS.
type fakeProcs struct {
	mu   sync.Mutex
	cpu  time.Duration
	wall time.Time
	gmp  int
	sets chan int
	tick chan time.Time
}

func newFakeProcs(max, gmp int) (*Procs, *fakeProcs) {
	f := &fakeProcs{wall: time.Unix(1000, 0), gmp: gmp, sets: make(chan int, 100), tick: make(chan time.Time)}
	p := &Procs{
		max:  max,
		tick: f.tick,
		cpu:  func() time.Duration { f.mu.Lock(); defer f.mu.Unlock(); return f.cpu },
		now:  func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.wall },
		set: func(n int) int {
			f.mu.Lock()
			defer f.mu.Unlock()
			prev := f.gmp
			f.gmp = n
			f.sets <- n
			return prev
		},
	}
	return p, f
}

// period advances the fake clock by a period in which cores were busy.
func (f *fakeProcs) period(cores float64) {
	f.mu.Lock()
	f.wall = f.wall.Add(procsPeriod)
	f.cpu += time.Duration(cores * float64(procsPeriod))
	f.mu.Unlock()
	f.tick <- time.Time{}
	// A second tick, at the same fake time (so ignored), returns once
	// the loop is done with the first.
	f.tick <- time.Time{}
}

func TestProcsAdapts(t *testing.T) {
	p, f := newFakeProcs(4, 4)
	p.start()
	expect := func(want int) {
		t.Helper()
		select {
		case got := <-f.sets:
			if got != want {
				t.Fatalf("GOMAXPROCS set to %d, want %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("GOMAXPROCS not set (want %d)", want)
		}
	}
	expect(1)      // starts with one P
	f.period(0.2)  // waiting for the server: no change
	f.period(0.95) // busy
	expect(2)
	f.period(1.9)
	expect(4)
	f.period(3.9) // at the maximum
	f.period(1.0)
	expect(3)
	f.period(0.3)
	expect(2)
	f.period(0.3)
	expect(1)
	p.Stop()
	expect(4) // restored
	p.Stop()
	select {
	case n := <-f.sets:
		t.Errorf("unexpected GOMAXPROCS %d after Stop", n)
	default:
	}
}

func TestAdaptProcsReal(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	p := AdaptProcs(max(2, before))
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS %d after AdaptProcs, want 1 to start", got)
	}
	p.Stop()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after Stop, want %d restored", got, before)
	}
	// A maximum of 1 changes nothing.
	p = AdaptProcs(1)
	p.Stop()
	var none *Procs
	none.Stop()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after AdaptProcs(1), want %d", got, before)
	}
}

// TestRunProcs: a run sets GOMAXPROCS once, a step adapts below it and
// returns to it, and the end gives the process its value back.
func TestRunProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	threads := before + 1
	p := SetRunProcs(threads)
	if got := runtime.GOMAXPROCS(0); got != threads || p.Threads() != threads {
		t.Errorf("GOMAXPROCS %d, Threads %d after SetRunProcs(%d)", got, p.Threads(), threads)
	}
	p.Adapt()
	if got := runtime.GOMAXPROCS(0); processCPU() >= 0 && got != 1 {
		t.Errorf("GOMAXPROCS %d while adapting, want 1 to start", got)
	}
	p.Fix()
	if got := runtime.GOMAXPROCS(0); got != threads {
		t.Errorf("GOMAXPROCS %d after Fix, want the run's %d", got, threads)
	}
	p.Adapt()
	p.Restore()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after Restore, want %d as before", got, before)
	}
	// 0 keeps GOMAXPROCS and reads it.
	p = SetRunProcs(0)
	if p.Threads() != before {
		t.Errorf("SetRunProcs(0).Threads() = %d, want %d", p.Threads(), before)
	}
	p.Restore()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after SetRunProcs(0) and Restore, want %d", got, before)
	}
}
