package plan

import (
	"fmt"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// States of a cell's repeat, derived from the runs in the store.
const (
	Done    = "done"    // a run finished: complete, degraded or autostopped
	Running = "running" // a run is being recorded now (its lock is held)
	Failed  = "failed"  // the last attempt failed; retried only with RetryFailed
	Pending = "pending" // no run yet, or only interrupted or stopped ones (rerun)
)

// CellState is a cell's repeat with its state and its runs.
type CellState struct {
	Cell
	State string
	Run   *store.RunInfo // the run that decides State (nil when pending without runs)
	// Attempts counts every run recorded for the cell's repeat.
	Attempts int
}

// Status is a plan's state: every cell's repeat, in run order.
type Status struct {
	Plan  *Plan
	Cells []CellState
	// Foreign counts runs tagged with the plan's name whose cell is no
	// longer in the plan (the file changed).
	Foreign int
}

// State derives the plan's state from the runs in the store: there is no
// other record, so it is right after a kill -9 or a reboot.
func State(p *Plan, st store.Source) (*Status, error) {
	runs, err := st.List()
	if err != nil {
		return nil, err
	}
	return stateOf(p, p.Cells(), runs), nil
}

// TaggedState is the state of the plan named name from its runs' tags alone,
// when the plan file is not at hand (pgarena serve): only cells that have a
// run are known, in the order of their first run, so no cell is pending
// without runs and the ETA counts only the known cells.
func TaggedState(name string, runs []store.RunInfo) *Status {
	var cells []Cell
	seen := map[string]bool{}
	for i := len(runs) - 1; i >= 0; i-- { // List is newest first
		r := &runs[i]
		c := Cell{ID: r.Cell, Name: r.CellName, Repeat: r.Repeat}
		if r.Plan != name || seen[c.Key()] {
			continue
		}
		seen[c.Key()] = true
		c.Index = len(cells) + 1
		cells = append(cells, c)
	}
	return stateOf(&Plan{Name: name}, cells, runs)
}

// stateOf derives the state of cells of p from runs (newest first).
func stateOf(p *Plan, cells []Cell, runs []store.RunInfo) *Status {
	idx := map[string]int{}
	for i := range cells {
		idx[cells[i].Key()] = i
	}
	s := &Status{Plan: p, Cells: make([]CellState, len(cells))}
	for i := range cells {
		s.Cells[i] = CellState{Cell: cells[i], State: Pending}
	}
	// List is newest first: the first run seen of a state is its latest.
	for i := range runs {
		r := &runs[i]
		if r.Plan != p.Name {
			continue
		}
		j, ok := idx[r.Cell+"/"+fmt.Sprint(r.Repeat)]
		if !ok {
			s.Foreign++
			continue
		}
		cs := &s.Cells[j]
		cs.Attempts++
		st := runState(r.Status)
		if cs.Run == nil || rank(st) > rank(cs.State) && rank(st) >= rank(Running) {
			cs.State, cs.Run = st, r
		}
	}
	return s
}

// runState maps a run's status to the state of its cell.
func runState(status string) string {
	switch status {
	case metrics.StatusComplete, metrics.StatusDegraded, metrics.StatusAutostopped:
		return Done
	case metrics.StatusRunning:
		return Running
	case metrics.StatusFailed, store.StatusCorrupt:
		return Failed
	}
	return Pending // interrupted (killed) or stopped (Ctrl-C): run again
}

// rank orders the states a cell's runs may give it: a finished run beats a
// running one; otherwise the latest attempt (failed or interrupted) decides.
func rank(s string) int {
	switch s {
	case Done:
		return 3
	case Running:
		return 2
	case Failed:
		return 1
	}
	return 0
}

// Counts returns how many cells' repeats are in each state.
func (s *Status) Counts() map[string]int {
	c := map[string]int{}
	for _, cs := range s.Cells {
		c[cs.State]++
	}
	return c
}

// ETA estimates the time the cells not done take, from the mean wall time
// (creation to end) of the cells done; ok is false before any is done.
func (s *Status) ETA() (eta time.Duration, ok bool) {
	var sum time.Duration
	n, left := 0, 0
	for _, cs := range s.Cells {
		switch {
		case cs.State == Done && cs.Run != nil && !cs.Run.End.IsZero():
			sum += cs.Run.End.Sub(cs.Run.Created)
			n++
		case cs.State != Done:
			left++
		}
	}
	if n == 0 {
		return 0, left == 0
	}
	return sum / time.Duration(n) * time.Duration(left), true
}
