package session

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/workload"
)

// countingReporter is a figure reporter without a database: its snapshots
// count, and its one figure is the window's length.
type countingReporter struct{ snaps float64 }

func (c *countingReporter) Snapshot(context.Context, *pgx.Conn) (map[string]float64, error) {
	c.snaps++
	return map[string]float64{"n": c.snaps}, nil
}

func (c *countingReporter) Figures(before, after map[string]float64, elapsed time.Duration, _ map[string]int64) []workload.Figure {
	return []workload.Figure{{Name: "elapsed_ms", Value: float64(elapsed.Milliseconds())},
		{Name: "snapshots", Value: after["n"] - before["n"]}}
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
	figs := fw.end(t.Errorf)
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
