package driver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/workload"
)

// Property: for any schedule, arrival process, seed and segment count, the
// union of every segment's arrivals is exactly the single-process schedule
// (the same offsets, as a multiset, in the same order once merged).
func TestSegmentArrivalsUnionIsTheWholeSchedule(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	schedules := []string{"const(200,3s)", "line(0,500,2s) const(300,1s)", "step(50,250,100,1s)", "const(3,2s)"}
	for trial := range 60 {
		sch := mustSchedule(t, schedules[trial%len(schedules)])
		process := []string{ArrivalPoisson, ArrivalUniform}[trial%2]
		seed := rng.Uint64()
		n := 1 + rng.IntN(7)
		var whole []time.Duration
		for a := newArrivals(sch, process, seed); ; {
			off, ok := a.next()
			if !ok {
				break
			}
			whole = append(whole, off)
		}
		var union []time.Duration
		for i := range n {
			a := &segmentArrivals{all: newArrivals(sch, process, seed), seg: Segment{Index: i, Count: n}}
			var mine []time.Duration
			for {
				off, ok := a.next()
				if !ok {
					break
				}
				mine = append(mine, off)
			}
			if want := (len(whole) - i + n - 1) / n; len(mine) != want {
				t.Fatalf("trial %d: segment %d/%d has %d arrivals, want %d", trial, i, n, len(mine), want)
			}
			union = append(union, mine...)
		}
		slices.Sort(union)
		if !slices.Equal(union, whole) {
			t.Fatalf("trial %d (%s, %s, %d segments): union of segments differs from the whole schedule", trial, sch, process, n)
		}
	}
}

func TestSegmentBlocksCoverTheClients(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for clients := n; clients <= 40; clients++ {
			next := 0
			for i := range n {
				lo, hi := Segment{Index: i, Count: n}.Block(clients)
				if lo != next || hi < lo {
					t.Fatalf("%d clients, segment %d/%d: block [%d,%d) after %d", clients, i, n, lo, hi, next)
				}
				next = hi
			}
			if next != clients {
				t.Fatalf("%d clients over %d segments cover %d", clients, n, next)
			}
		}
	}
}

func TestParseSegment(t *testing.T) {
	for _, c := range []struct {
		in, index string
		want      Segment
		bad       bool
	}{
		{in: "0/4", want: Segment{0, 4}},
		{in: "3/4", want: Segment{3, 4}},
		{in: "/4", index: "2", want: Segment{2, 4}},
		{in: "/4", bad: true},
		{in: "4/4", bad: true},
		{in: "-1/4", bad: true},
		{in: "1", bad: true},
		{in: "0/0", bad: true},
	} {
		got, err := ParseSegment(c.in, c.index)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("ParseSegment(%q, %q) = %v, %v", c.in, c.index, got, err)
		}
	}
}

// idWorkload records the ids of the workers it makes.
type idWorkload struct {
	sleepWorkload
	mu  sync.Mutex
	ids []int
}

func (w *idWorkload) NewWorker(id int, r *rand.Rand) workload.Worker {
	w.mu.Lock()
	w.ids = append(w.ids, id)
	w.mu.Unlock()
	return w.sleepWorkload.NewWorker(id, r)
}

// Each client keeps its id of the whole run in whichever segment runs it,
// and the segments' transactions add up to the whole run's.
func TestSegmentsKeepClientIDs(t *testing.T) {
	var all []int
	var total int64
	for i := range 3 {
		w := &idWorkload{sleepWorkload: sleepWorkload{sleep: time.Millisecond}}
		_, col, err := run(t, context.Background(), w, nilDialer, Config{Clients: 8, Transactions: 5, Tick: 20 * time.Millisecond, Segment: Segment{i, 3}})
		if err != nil {
			t.Fatal(err)
		}
		ok, _, _, _ := col.total()
		total += ok
		all = append(all, w.ids...)
	}
	slices.Sort(all)
	if !slices.Equal(all, []int{0, 1, 2, 3, 4, 5, 6, 7}) || total != 40 {
		t.Fatalf("ids %v, %d transactions; want 0..7 once each and 40", all, total)
	}
}

// --start-at: measuring starts at the given time, after connecting; the
// wait says so at once and reports progress at least every 5 s.
func TestStartAtWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(fakeStart)
		w := &sleepWorkload{sleep: 10 * time.Millisecond, clk: clk}
		at := fakeStart.Add(12 * time.Second)
		var notes []string
		var times []time.Duration
		notef := func(format string, args ...any) {
			notes = append(notes, fmt.Sprintf(format, args...))
			times = append(times, clk.Now().Sub(fakeStart))
		}
		res, _, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 1, Duration: 100 * time.Millisecond, Tick: 50 * time.Millisecond, StartAt: at, Notef: notef})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Start.Equal(at) {
			t.Fatalf("started at %s, want %s", res.Start, at)
		}
		want := []string{
			"waiting 12s for --start-at 2026-03-01T09:00:12Z",
			"waiting for --start-at 2026-03-01T09:00:12Z: 1s so far, deadline 12s; 11s to go",
			"waiting for --start-at 2026-03-01T09:00:12Z: 6s so far, deadline 12s; 6s to go",
			"waiting for --start-at 2026-03-01T09:00:12Z: 11s so far, deadline 12s; 1s to go",
		}
		if !slices.Equal(notes, want) {
			t.Errorf("notes %q at %v, want %q", notes, times, want)
		}
	})
}
