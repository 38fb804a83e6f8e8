package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/store"
)

// outageRun is a run of 1 s ticks: 12 intervals, no commits in intervals
// 5-7 (an outage), no intervals at all from 12 s to 16 s (the driver was
// stalled), then 3 more and a last partial one of 64 transactions in
// 0.053 s; server samples every second except from 4.5 s to 9.5 s.
func outageRun() *store.Run {
	rec := metrics.NewRecorder([]string{"a"}, t0)
	h := rec.NewHandle()
	r := &store.Run{ID: "outage", Spec: store.RunSpec{TickS: 1}}
	add := func(from time.Time, d time.Duration, n int) {
		for range n {
			h.Record(0, from, from, from.Add(time.Millisecond), pgerr.ClassNone)
		}
		rec.Begin(from)
		iv := rec.Tick(from.Add(d))
		iv.Connected = 4
		r.Intervals = append(r.Intervals, iv)
	}
	for s := range 12 {
		n := 100
		if s >= 5 && s <= 7 {
			n = 0
		}
		add(t0.Add(time.Duration(s)*time.Second), time.Second, n)
	}
	for s := 16; s < 19; s++ {
		add(t0.Add(time.Duration(s)*time.Second), time.Second, 100)
	}
	add(t0.Add(19*time.Second), 53*time.Millisecond, 64)
	for s := range 20 {
		if s >= 5 && s <= 9 {
			continue
		}
		r.Samples = append(r.Samples, store.Sample{Time: t0.Add(time.Duration(s)*time.Second + 500*time.Millisecond),
			Source: "pg_stat_database", Values: map[string]float64{"pg.xact_commit_per_s": 100}})
	}
	return r
}

func chartByID(t *testing.T, cs chartSet, id string) chart {
	t.Helper()
	for _, c := range cs.Charts {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no chart %s", id)
	return chart{}
}

// at returns the value of s at x.
func at(t *testing.T, cs chartSet, s series, x float64) float64 {
	t.Helper()
	for i, v := range cs.X {
		if v == x {
			return s.Values[i]
		}
	}
	t.Fatalf("no point at x=%v in %v", x, cs.X)
	return 0
}

// TestChartsBreakAtGaps: time without intervals, intervals without commits
// (latency) and stretches without samples are gaps, and a partial last
// interval is not drawn as a rate.
func TestChartsBreakAtGaps(t *testing.T) {
	r := outageRun()
	cs := buildCharts([]*store.Run{r}, []string{"outage"})
	tps := chartByID(t, cs, "throughput").Series[0]
	if v := at(t, cs, tps, 3); v != 100 {
		t.Errorf("tps at 3 s = %v, want 100", v)
	}
	if v := at(t, cs, tps, 6); v != 0 {
		t.Errorf("tps in the outage = %v, want 0 (a measured zero, not a gap)", v)
	}
	if v := at(t, cs, tps, 13); !isGap(v) {
		t.Errorf("tps at 13 s (no interval from 12 to 16 s) = %v, want a gap", v)
	}
	last := cs.X[len(cs.X)-1]
	if v := at(t, cs, tps, last); !isGap(v) && !math.IsNaN(v) {
		t.Errorf("the partial last interval (64 tx in 0.053 s) is drawn as %v tx/s", v)
	}
	lat := chartByID(t, cs, "latency-0").Series[0]
	if v := at(t, cs, lat, 6); !isGap(v) {
		t.Errorf("p50 in an interval without commits = %v, want a gap", v)
	}
	srv := chartByID(t, cs, "server-commits").Series[0]
	if v := at(t, cs, srv, 3); v != 100 {
		t.Errorf("server commits at 3 s = %v, want 100", v)
	}
	for _, x := range []float64{8, 9} {
		if v := at(t, cs, srv, x); !isGap(v) {
			t.Errorf("server commits at %v s, inside 5 s without samples = %v, want a gap (no stale value drawn flat)", x, v)
		}
	}
	b, err := tps.Values.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"gap"`) {
		t.Errorf("JSON of the tps series has no gap marker: %s", b)
	}
	if segs := segments(cs.X, tps.Values); len(segs) != 2 {
		t.Errorf("the PNG tps line has %d segments, want 2 (split at the stall)", len(segs))
	}
}
