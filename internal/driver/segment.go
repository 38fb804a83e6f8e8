package driver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/await"
	"github.com/pgarena/pgarena/internal/clock"
)

// Segment is this process's share of a run split over Count processes
// (machines, pods or local agents: --segment Index/Count). Each group's
// clients are cut into Count contiguous blocks; a client keeps the id, and
// so the random stream and (TPC-C) home warehouse, it has in the whole run.
// Open-loop arrivals are striped: arrival n of the whole run's schedule
// belongs to segment n mod Count, so the union of every segment's arrivals
// is exactly the single-process schedule. The zero Segment is the whole run.
type Segment struct {
	Index, Count int
}

// ParseSegment parses "i/N" (0 ≤ i < N). An empty index ("/N") is taken
// from index, the caller's JOB_COMPLETION_INDEX (a Kubernetes Indexed Job).
func ParseSegment(s, index string) (Segment, error) {
	is, ns, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || n < 1 {
		return Segment{}, fmt.Errorf("--segment %q: expected i/N, e.g. 0/4 (segment 0 of 4)", s)
	}
	if is == "" {
		if index == "" {
			return Segment{}, fmt.Errorf("--segment %q takes its index from JOB_COMPLETION_INDEX, which is not set: give --segment i/%d", s, n)
		}
		is = index
	}
	i, err := strconv.Atoi(is)
	if err != nil || i < 0 || i >= n {
		return Segment{}, fmt.Errorf("--segment %q: the index %q must be a number from 0 to %d", s, is, n-1)
	}
	return Segment{Index: i, Count: n}, nil
}

// Whole reports whether the segment is the whole run.
func (s Segment) Whole() bool { return s.Count <= 1 }

func (s Segment) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Block is the segment's share [lo, hi) of n clients: contiguous, sizes
// differing by at most one, the blocks of all segments covering 0..n-1.
func (s Segment) Block(n int) (lo, hi int) {
	if s.Whole() {
		return 0, n
	}
	return s.Index * n / s.Count, (s.Index + 1) * n / s.Count
}

// ownsArrival reports whether arrival n (0-based, of the whole schedule)
// is this segment's.
func (s Segment) ownsArrival(n int64) bool {
	return s.Whole() || n%int64(s.Count) == int64(s.Index)
}

// segmentArrivals is the segment's stripe of a whole run's arrivals: every
// segment draws the same sequence (same seed) and keeps its own.
type segmentArrivals struct {
	all *arrivals
	seg Segment
	n   int64
}

func (a *segmentArrivals) next() (time.Duration, bool) {
	for {
		off, ok := a.all.next()
		if !ok {
			return 0, false
		}
		n := a.n
		a.n++
		if a.seg.ownsArrival(n) {
			return off, true
		}
	}
}

// waitForStart sleeps until at (--start-at) so that segments on several
// machines cut their intervals on the same wall-clock boundaries. A start
// already past is noted and the run starts at once. It returns false when
// ctx ends first.
func waitForStart(ctx context.Context, clk clock.Clock, at time.Time, notef func(string, ...any)) bool {
	if at.IsZero() {
		return true
	}
	d := clock.Until(clk, at)
	if d <= 0 {
		notef("--start-at %s passed %s ago (connecting took longer): starting now, so this segment's intervals are %s late against the others", at.UTC().Format(time.RFC3339), (-d).Round(time.Millisecond), (-d).Round(time.Millisecond))
		return true
	}
	notef("waiting %s for --start-at %s", d.Round(time.Millisecond), at.UTC().Format(time.RFC3339))
	p := await.Wait{What: "--start-at " + at.UTC().Format(time.RFC3339), Timeout: d, Notef: notef, Clock: clk}.Start()
	for {
		left := clock.Until(clk, at)
		if left <= 0 {
			return true
		}
		t := clk.NewTimer(min(left, max(p.NextReport(), time.Millisecond)))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
		if left := clock.Until(clk, at); left > 0 {
			p.Report(fmt.Sprintf("%s to go", left.Round(time.Second)))
		}
	}
}
