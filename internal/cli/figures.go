package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/workload"
)

// figureWindow measures a workload's figures of merit (TPC-C NOPM, TPM)
// over the measured part of a run: a database snapshot when warm-up ends
// (or at the start), another at the end, and the clients' committed counts
// in between. Sweeps get no figures: each step would need its own.
type figureWindow struct {
	rep       workload.FigureReporter
	conn      *pgx.Conn
	before    map[string]float64
	start     time.Time
	committed map[string]int64
	err       error
}

func newFigureWindow(w workload.Workload, conn *pgx.Conn, f *runFlags) *figureWindow {
	rep, ok := w.(workload.FigureReporter)
	if !ok || len(f.steps) > 1 {
		return &figureWindow{}
	}
	return &figureWindow{rep: rep, conn: conn, committed: map[string]int64{}}
}

// begin snapshots before the run when there is no warm-up.
func (fw *figureWindow) begin(ctx context.Context) error {
	if fw.rep == nil {
		return nil
	}
	return fw.snapshot(ctx, time.Now())
}

func (fw *figureWindow) snapshot(ctx context.Context, at time.Time) error {
	snap, err := fw.rep.Snapshot(ctx, fw.conn)
	if err != nil {
		fw.rep, fw.err = nil, err
		return fmt.Errorf("figures of merit are off: %w", err)
	}
	fw.before, fw.start = snap, at
	return nil
}

// interval counts the committed transactions of measured intervals and
// re-snapshots at the last warm-up interval.
func (fw *figureWindow) interval(ctx context.Context, iv metrics.Interval, warmup, tick time.Duration) {
	if fw.rep == nil {
		return
	}
	if iv.Warmup {
		// The warm-up ends within half a tick of this interval's end:
		// measure from here.
		if warmup > 0 && iv.End.Add(tick/2).Sub(iv.Start.Add(-time.Duration(iv.Seq-1)*tick)) >= warmup {
			_ = fw.snapshot(ctx, iv.End)
		}
		return
	}
	for _, t := range iv.Tx {
		fw.committed[t.Name] += t.Count
	}
}

// end takes the final snapshot and computes the figures.
func (fw *figureWindow) end(ctx context.Context, notef func(string, ...any)) []metrics.Figure {
	if fw.rep == nil {
		return nil
	}
	after, err := fw.rep.Snapshot(ctx, fw.conn)
	if err != nil {
		notef("figures of merit: %v", err)
		return nil
	}
	var out []metrics.Figure
	for _, f := range fw.rep.Figures(fw.before, after, time.Since(fw.start), fw.committed) {
		out = append(out, metrics.Figure{Name: f.Name, Value: f.Value, Unit: f.Unit, Note: f.Note, Tx: f.Tx})
	}
	return out
}
