package session

import (
	"context"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// countingReporter is a figure reporter without a database: its snapshots
// count, and its one figure is the window's length.
type countingReporter struct{ snaps float64 }

func (c *countingReporter) Snapshot(context.Context, pgtext.Querier) (map[string]float64, error) {
	c.snaps++
	return map[string]float64{"n": c.snaps}, nil
}

func (c *countingReporter) Figures(win workload.FigureWindow) []workload.Figure {
	return []workload.Figure{{Name: "elapsed_ms", Value: float64(win.Elapsed.Milliseconds())},
		{Name: "snapshots", Value: win.After["n"] - win.Before["n"]}}
}

// TestFigureWindowEndsWhenClientsStop: what follows the load (a replica's
// catch-up, the outputs draining) is outside the figures' window.
func TestFigureWindowEndsWhenClientsStop(t *testing.T) {
	rep := &countingReporter{}
	fw := &figureWindow{rep: rep, committed: map[string]int64{}}
	t0 := time.Now()
	if err := fw.begin(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the clients run
	fw.stop(t.Context())
	ran := time.Since(t0)
	time.Sleep(100 * time.Millisecond) // catch-up, draining
	// The measured window: the driver's start and end.
	figs := fw.end(t.Errorf, t0, t0.Add(ran))
	if len(figs) != 2 {
		t.Fatalf("figures %+v", figs)
	}
	if ms := figs[0].Value; ms < 20 || ms > float64(ran.Milliseconds()) {
		t.Errorf("window %v ms, want at least the 20 ms the clients ran and at most the %v until stop, not the wait after", ms, ran)
	}
	if figs[1].Value != 1 {
		t.Errorf("%v snapshots after the first, want the one stop took", figs[1].Value)
	}
}

// timedReporter keeps the times a FigureReporter is given.
type timedReporter struct {
	countingReporter
	times map[string]workload.TxTimes
}

func (r *timedReporter) Figures(win workload.FigureWindow) []workload.Figure {
	r.times = win.Times
	return nil
}

// TestTimedFigures: a FigureReporter gets each type's total latency
// and shortest over the window's intervals (warm-up left out).
func TestTimedFigures(t *testing.T) {
	rep := &timedReporter{}
	fw := &figureWindow{rep: rep, committed: map[string]int64{}, times: map[string]workload.TxTimes{}}
	if err := fw.begin(t.Context()); err != nil {
		t.Fatal(err)
	}
	iv := func(warmup bool, ms ...int64) *metrics.Interval {
		h := metrics.NewHistogram()
		for _, v := range ms {
			_ = h.RecordValue(v * 1000)
		}
		return &metrics.Interval{Warmup: warmup, Tx: []metrics.TxStats{{Name: "power/q1", Count: int64(len(ms)), Latency: h}}}
	}
	for _, i := range []*metrics.Interval{iv(true, 1), iv(false, 100, 300), iv(false), iv(false, 50)} {
		if err := fw.Write(Record{Interval: i}); err != nil {
			t.Fatal(err)
		}
	}
	fw.stop(t.Context())
	fw.end(t.Errorf, time.Now().Add(-time.Second), time.Now())
	got := rep.times["power/q1"]
	near := func(d, want time.Duration) bool { return d > want-want/1000 && d < want+want/1000 }
	if !near(got.Total, 450*time.Millisecond) || !near(got.Min, 50*time.Millisecond) {
		t.Errorf("times %+v, want total 450 ms and min 50 ms (±0.1%%: 3 significant digits)", got)
	}
}
