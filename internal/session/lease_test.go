package session

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/store"
)

// ticker cuts intervals of one type: interval n holds n transactions of
// n ms.
type ticker struct {
	rec *metrics.Recorder
	h   *metrics.Handle
	n   int
}

func newTicker() *ticker {
	rec := metrics.NewRecorder([]string{"a"}, time.Unix(0, 0))
	rec.ReuseHistograms() // as a run's Recorder does
	return &ticker{rec: rec, h: rec.NewHandle()}
}

func (tk *ticker) tick() *metrics.Interval {
	tk.n++
	at := time.Unix(int64(tk.n-1), 0)
	for range tk.n {
		tk.h.Record(0, at, at, at.Add(time.Duration(tk.n)*time.Millisecond), pgerr.ClassNone)
	}
	iv := tk.rec.Tick(time.Unix(int64(tk.n), 0))
	return &iv
}

// histCounts are an interval's histogram counts and extremes.
func histCounts(iv *metrics.Interval) [4]int64 {
	lat, svc := iv.Tx[0].Latency, iv.Tx[0].Service
	return [4]int64{lat.TotalCount(), svc.TotalCount(), lat.Min(), lat.Max()}
}

// countsMatch: interval n holds n transactions of n ms (3 significant
// digits).
func countsMatch(iv *metrics.Interval) bool {
	c, n := histCounts(iv), int64(iv.Seq)
	return c[0] == n && c[1] == n && c[2] >= n*999 && c[2] <= n*1000 && c[3] >= n*1000 && c[3] <= n*1001
}

// borrower reads each interval at the start of Write and again once hold
// lets it go on, then says it has written it.
type borrower struct {
	hold    chan struct{}
	written chan int
	mu      sync.Mutex
	bad     []string
}

func newBorrower(held bool) *borrower {
	o := &borrower{hold: make(chan struct{}), written: make(chan int, 1000)}
	if !held {
		close(o.hold)
	}
	return o
}

func (o *borrower) Write(r Record) error {
	if r.Interval == nil {
		return nil
	}
	before := histCounts(r.Interval)
	<-o.hold
	if after := histCounts(r.Interval); after != before || !countsMatch(r.Interval) {
		o.mu.Lock()
		o.bad = append(o.bad, fmt.Sprintf("interval %d: %v when Write began, %v at its end", r.Interval.Seq, before, after))
		o.mu.Unlock()
	}
	o.written <- r.Interval.Seq
	return nil
}

func (o *borrower) BorrowsRecords() {}

func (o *borrower) problems() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bad
}

// keeper keeps every interval (not a Borrower).
type keeper struct {
	mu  sync.Mutex
	ivs []*metrics.Interval
}

func (o *keeper) Write(r Record) error {
	if r.Interval != nil {
		o.mu.Lock()
		o.ivs = append(o.ivs, r.Interval)
		o.mu.Unlock()
	}
	return nil
}

// TestOutputsReadIntervalsTheRecorderReuses: with the Recorder reusing
// histograms (as a run's does), an output still writing an interval, or
// keeping it, reads that interval's counts however many ticks later: no
// histogram is emptied or refilled under it (run with -race); the
// histograms of intervals every output has written are reused.
func TestOutputsReadIntervalsTheRecorderReuses(t *testing.T) {
	notef := func(string, ...any) {}

	// A Borrower held in the first interval's Write for 8 ticks.
	tk := newTicker()
	slow, fast := newBorrower(true), newBorrower(false)
	f := newFanout(notef, slow, fast)
	first := tk.tick()
	held := map[any]bool{first.Tx[0].Latency: true, first.Tx[0].Service: true}
	f.publish(Record{Interval: first})
	for range 8 {
		iv := tk.tick()
		if held[iv.Tx[0].Latency] || held[iv.Tx[0].Service] {
			t.Fatalf("interval %d got a histogram of interval 1, which an output is still writing", iv.Seq)
		}
		f.publish(Record{Interval: iv})
	}
	close(slow.hold)
	// Once both have written each interval, histograms come back.
	seen, reused := map[any]bool{}, false
	for !reused && tk.n < 200 {
		for _, o := range []*borrower{slow, fast} {
			for seq := 0; seq < tk.n; {
				seq = <-o.written
			}
		}
		iv := tk.tick()
		for _, h := range []any{iv.Tx[0].Latency, iv.Tx[0].Service} {
			reused = reused || seen[h]
			seen[h] = true
		}
		f.publish(Record{Interval: iv})
	}
	f.close()
	if !reused {
		t.Errorf("%d intervals written by Borrowers only, none reused a histogram", tk.n)
	}
	for _, o := range []*borrower{slow, fast} {
		if p := o.problems(); len(p) > 0 {
			t.Errorf("an interval changed under an output's Write:\n%v", p)
		}
	}

	// An output that keeps intervals beside a Borrower.
	tk, fast = newTicker(), newBorrower(false)
	kept := &keeper{}
	f = newFanout(notef, kept, fast)
	for range 20 {
		f.publish(Record{Interval: tk.tick()})
		<-fast.written
	}
	f.close()
	if len(kept.ivs) != 20 {
		t.Fatalf("kept %d intervals, want 20", len(kept.ivs))
	}
	for _, iv := range kept.ivs {
		if !countsMatch(iv) {
			t.Errorf("a kept interval changed: interval %d holds %v", iv.Seq, histCounts(iv))
		}
	}
}

// sampleCounter counts the records it is given; a skipper is a SampleSkipper.
type sampleCounter struct{ samples, intervals chan struct{} }

func (o *sampleCounter) Write(r Record) error {
	switch {
	case r.Samples != nil:
		o.samples <- struct{}{}
	case r.Interval != nil:
		o.intervals <- struct{}{}
	}
	return nil
}

type skipper struct{ sampleCounter }

func (o *skipper) SkipsSamples() {}

// TestSampleSkippersGetNoSamples: samples go to the outputs that use them
// only; intervals go to every output.
func TestSampleSkippersGetNoSamples(t *testing.T) {
	newCounter := func() sampleCounter {
		return sampleCounter{samples: make(chan struct{}, 10), intervals: make(chan struct{}, 10)}
	}
	all, skip := &sampleCounter{}, &skipper{}
	*all, skip.sampleCounter = newCounter(), newCounter()
	f := newFanout(func(string, ...any) {}, all, skip)
	f.publish(Record{Samples: []store.Sample{{Source: "host_cpu"}}})
	f.publish(Record{Interval: &metrics.Interval{Seq: 1}})
	f.close()
	if len(all.samples) != 1 || len(all.intervals) != 1 || len(skip.samples) != 0 || len(skip.intervals) != 1 {
		t.Errorf("samples, intervals: output %d, %d; skipper %d, %d (want 1, 1; 0, 1)",
			len(all.samples), len(all.intervals), len(skip.samples), len(skip.intervals))
	}
}
