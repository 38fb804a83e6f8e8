package session

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// figureWindow measures the first group's (or Spec.Figures') figures of merit (TPC-C NOPM,
// TPM) over the measured part of a run: a database snapshot when warm-up
// ends (or as measuring starts, after connecting and any --start-at wait),
// another at the end, and the clients' committed
// counts in between. It is an Output, so its snapshots never hold up the
// clock. The window ends when the clients stop (stop), before anything that
// follows the load (a replica's catch-up, the heartbeat's commits) can move
// the clock or the database's counters. Sweeps get no figures: each step
// would need its own.
type figureWindow struct {
	rep    workload.FigureReporter
	conn   pgtext.Querier
	warmup time.Duration
	tick   time.Duration

	snapMu sync.Mutex // one snapshot at a time on conn

	mu        sync.Mutex
	before    map[string]float64
	start     time.Time
	warmedUp  bool // start is the warm-up's end (a re-snapshot)
	committed map[string]int64
	times     map[string]workload.TxTimes
	measured  time.Duration      // tps's time: the measured intervals' summed length
	counted   map[string]int64   // and its count, as metrics.Accumulator has them
	after     map[string]float64 // set by stop
	stopped   time.Time
	stopErr   error
}

func newFigureWindow(spec Spec, conn pgtext.Querier) *figureWindow {
	rep, ok := spec.Groups[0].Workload.(workload.FigureReporter)
	if len(spec.Groups) > 1 {
		rep, ok = spec.Figures, spec.Figures != nil
	}
	if !ok || len(spec.Steps) > 1 {
		return &figureWindow{}
	}
	return &figureWindow{rep: rep, conn: conn, warmup: spec.Warmup, tick: spec.Tick, committed: map[string]int64{},
		times: map[string]workload.TxTimes{}}
}

// begin snapshots as measuring starts; the window starts when the
// snapshot is read.
func (fw *figureWindow) begin(ctx context.Context) error {
	if fw.reporter() == nil {
		return nil
	}
	return fw.snapshot(ctx, time.Time{})
}

// snapshotWait bounds one figures snapshot: the run must not hang on it.
const snapshotWait = 30 * time.Second

func (fw *figureWindow) snapshot(ctx context.Context, at time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, snapshotWait)
	defer cancel()
	fw.snapMu.Lock()
	snap, err := fw.rep.Snapshot(ctx, fw.conn)
	fw.snapMu.Unlock()
	if at.IsZero() {
		at = time.Now()
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if err != nil {
		fw.rep = nil
		return fmt.Errorf("figures of merit are off: %w", err)
	}
	fw.before, fw.start = snap, at
	return nil
}

// Write counts the committed transactions of measured intervals and
// re-snapshots at the last warm-up interval.
func (fw *figureWindow) Write(r Record) error {
	iv := r.Interval
	if iv == nil || fw.reporter() == nil {
		return nil
	}
	if iv.Warmup {
		// The warm-up ends within half a tick of this interval's end:
		// measure from here.
		if fw.warmup > 0 && iv.End.Add(fw.tick/2).Sub(iv.Start.Add(-time.Duration(iv.Seq-1)*fw.tick)) >= fw.warmup {
			if fw.snapshot(context.Background(), iv.End) == nil {
				fw.mu.Lock()
				fw.warmedUp = true
				fw.mu.Unlock()
			}
		}
		return nil
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if !iv.Drain {
		fw.measured += iv.Duration()
	}
	if fw.counted == nil {
		fw.counted = map[string]int64{}
	}
	for _, t := range iv.Tx {
		// The database counts what committed in the drain too.
		fw.committed[t.Name] += t.Count + t.Unfinished.Committed
		fw.counted[t.Name] += t.Count
		if t.Latency != nil && t.Count > 0 {
			tt, seen := fw.times[t.Name]
			tt.Total += time.Duration(t.Latency.Mean() * float64(t.Count) * float64(time.Microsecond))
			if lo := time.Duration(t.Latency.Min()) * time.Microsecond; !seen || lo < tt.Min {
				tt.Min = lo
			}
			fw.times[t.Name] = tt
		}
	}
	return nil
}

func (fw *figureWindow) reporter() workload.FigureReporter {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.rep
}

func (fw *figureWindow) String() string { return "figures" }

// BorrowsRecords: Write adds up counts and means and keeps no interval.
func (fw *figureWindow) BorrowsRecords() {}

// SkipsSamples: the figures come from the server, not the samplers.
func (fw *figureWindow) SkipsSamples() {}

// stop takes the final snapshot; call it as soon as the clients have
// stopped.
func (fw *figureWindow) stop(ctx context.Context) {
	rep := fw.reporter()
	if rep == nil {
		return
	}
	// An interrupted run still has its figures for the time it ran: the
	// snapshot outlives the interrupt, within its own deadline.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), snapshotWait)
	defer cancel()
	fw.snapMu.Lock()
	after, err := rep.Snapshot(ctx, fw.conn)
	fw.snapMu.Unlock()
	fw.mu.Lock()
	fw.after, fw.stopped, fw.stopErr = after, time.Now(), err
	fw.mu.Unlock()
}

// end computes the figures over the measured window, from start (or the
// warm-up's end) to end, the run's: the snapshots bracket it (begin just
// before start, stop just after end). Call it after the outputs are
// drained (the committed counts of the last intervals are in).
func (fw *figureWindow) end(notef func(string, ...any), start, end time.Time) []metrics.Figure {
	rep := fw.reporter()
	if rep == nil {
		return nil
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.stopErr != nil || fw.stopped.IsZero() || fw.start.IsZero() { // start: measuring never began
		if fw.stopErr != nil {
			notef("figures of merit: %v", fw.stopErr)
		}
		return nil
	}
	var out []metrics.Figure
	if fw.warmedUp {
		start = fw.start
	}
	win := workload.FigureWindow{Before: fw.before, After: fw.after, Elapsed: end.Sub(start), Committed: fw.committed, Times: fw.times,
		Measured: fw.measured, Counted: fw.counted}
	for _, f := range rep.Figures(win) {
		out = append(out, metrics.Figure{Name: f.Name, Value: f.Value, Unit: f.Unit, Note: f.Note, Tx: f.Tx, CrossCheck: f.CrossCheck})
	}
	return out
}
