package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// Executor runs the cells' runs; the caller implements it with the run
// configuration (internal/runconfig), so every run flag works in a plan.
type Executor interface {
	// Check parses and checks the run arguments (workload, then flags)
	// without running anything; the error is one line. params names the
	// workload's own flags among them (they decide which cells share
	// loaded data).
	Check(args []string) (params map[string]bool, err error)
	// Run runs the arguments as one recorded run tagged with tag. runID is
	// "" when nothing was recorded (the error says why); a recorded run
	// that failed has its id and an error.
	Run(ctx context.Context, args []string, tag store.PlanTag) (runID string, err error)
	// Maintain runs maintenance (Checkpoint, Vacuum) on the target the
	// target arguments name.
	Maintain(ctx context.Context, targetArgs []string, what []string) error
}

// Validate checks every cell's run arguments with ex, without running
// anything. An error names the file and line of the value at fault (a
// flag checked alone), else of the cell. It returns each cell's init key.
func Validate(p *Plan, ex Executor, getenv func(string) string) (map[string]string, error) {
	keys := map[string]string{}
	seen := map[string]string{}
	alone := map[string]error{}
	// every unset variable is named at once, at the first target's line
	var unset []string
	unsetLine := 0
	for _, c := range p.Cells() {
		if c.Repeat != 1 {
			continue
		}
		if other, dup := seen[c.ID]; dup {
			return nil, &Error{Path: p.Path, Line: c.Line, Msg: fmt.Sprintf("cells %s and %s run the same benchmark (give the targets different dsn, flags or labels)", other, c.Name)}
		}
		seen[c.ID] = c.Name
		args, err := expandArgs(c.Args(false), getenv)
		var ue *unsetError
		if errors.As(err, &ue) {
			for _, n := range ue.names {
				if !slices.Contains(unset, n) {
					unset = append(unset, n)
				}
			}
			if unsetLine == 0 || c.Target.Line < unsetLine {
				unsetLine = c.Target.Line
			}
			continue
		}
		if err != nil {
			return nil, &Error{Path: p.Path, Line: c.Target.Line, Msg: err.Error()}
		}
		params, err := ex.Check(args)
		if err != nil {
			return nil, p.locate(&c, ex, err, alone)
		}
		keys[c.ID] = c.InitKey(params)
	}
	if len(unset) > 0 {
		slices.Sort(unset) // cells may be shuffled: one order whatever theirs
		return nil, &Error{Path: p.Path, Line: unsetLine, Msg: (&unsetError{unset}).Error()}
	}
	return keys, nil
}

// unsetError names the environment variables a dsn uses that are not set.
type unsetError struct{ names []string }

func (e *unsetError) Error() string {
	if len(e.names) == 1 {
		return "dsn: the environment variable " + e.names[0] + " is not set"
	}
	return "dsn: the environment variables " + strings.Join(e.names, ", ") + " are not set"
}

// locate finds the line a failed check is about: the first of the cell's
// flags that fails alone, else the cell's own line.
func (p *Plan) locate(c *Cell, ex Executor, err error, alone map[string]error) error {
	for _, f := range c.Flags {
		if f.Line == 0 {
			continue
		}
		args := append([]string{c.Workload.Workload}, f.args()...)
		k := strings.Join(args, "\x00")
		ferr, ok := alone[k]
		if !ok {
			_, ferr = ex.Check(args)
			alone[k] = ferr
		}
		if ferr != nil {
			return &Error{Path: p.Path, Line: f.Line, Msg: f.Name + ": " + ferr.Error()}
		}
	}
	return &Error{Path: p.Path, Line: c.Line, Msg: "cell " + c.Name + ": " + err.Error()}
}

// expandArgs expands ${VAR} and $VAR in --dsn arguments with getenv; an
// unset variable is an error (a DSN must not silently become empty).
func expandArgs(args []string, getenv func(string) string) ([]string, error) {
	out := make([]string, len(args))
	var missing []string
	for i, a := range args {
		out[i] = a
		if v, ok := strings.CutPrefix(a, "--dsn="); ok && strings.Contains(v, "$") {
			out[i] = "--dsn=" + os.Expand(v, func(k string) string {
				val := ""
				if getenv != nil {
					val = getenv(k)
				}
				if val == "" {
					missing = append(missing, k)
				}
				return val
			})
		}
	}
	if len(missing) > 0 {
		return nil, &unsetError{missing}
	}
	return out, nil
}

// Runner runs a plan's cells that are not done yet.
type Runner struct {
	Plan        *Plan
	Store       *store.Store
	Exec        Executor
	Getenv      func(string) string // expands ${VAR} in DSNs
	Env         []string            // the hooks' environment (KEY=VALUE)
	HookOutput  io.Writer           // the hooks' stdout and stderr
	Notef       func(format string, args ...any)
	RetryFailed bool // run failed cells again
}

// Outcome counts what a Run did. Failed counts cells whose run reported
// an error (failed, or recorded but degraded); the store has each state.
type Outcome struct {
	Ran, Failed, Skipped int
}

// ErrBusy is returned when another process runs the same plan.
var ErrBusy = errors.New("plan is already running")

// Run runs the cells not done, in order. A failed cell is recorded in the
// store (as a failed run when its run recorded nothing) and the plan goes
// on; an interrupted context stops it, and the cell it was running is
// rerun next time.
func (r *Runner) Run(ctx context.Context) (Outcome, error) {
	var out Outcome
	unlock, err := r.lock()
	if err != nil {
		return out, err
	}
	defer unlock()
	keys, err := Validate(r.Plan, r.Exec, r.Getenv)
	if err != nil {
		return out, err
	}
	s, err := State(r.Plan, r.Store)
	if err != nil {
		return out, err
	}
	loaded := map[string]bool{}
	for _, cs := range s.Cells {
		if cs.State == Done {
			loaded[keys[cs.ID]] = true
		}
	}
	for i, cs := range s.Cells {
		if cs.State == Done || cs.State == Running || cs.State == Failed && !r.RetryFailed {
			out.Skipped++
			continue
		}
		ok, err := r.cell(ctx, &s.Cells[i].Cell, keys[cs.ID], loaded, len(s.Cells))
		if err != nil {
			return out, err
		}
		out.Ran++
		if !ok {
			out.Failed++
		}
		if cd := cs.Settings.Cooldown; cd != nil && *cd > 0 && i < len(s.Cells)-1 {
			if err := sleep(ctx, *cd); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// cell runs one cell's repeat: maintenance, before hook, the run, after
// hook. ok is false when the cell failed (recorded); err only when the
// plan must stop (interrupted, or the failure could not be recorded).
func (r *Runner) cell(ctx context.Context, c *Cell, initKey string, loaded map[string]bool, total int) (ok bool, err error) {
	r.notef("cell %d/%d: %s (repeat %d)%s", c.Index, total, c.Name, c.Repeat, r.eta())
	init := c.Settings.Init == InitPerCell || c.Settings.Init == InitOnce && !loaded[initKey]
	tag := store.PlanTag{Plan: r.Plan.Name, Cell: c.ID, CellName: c.Name, Repeat: c.Repeat}
	args, err := expandArgs(c.Args(init), r.Getenv)
	if err == nil && len(c.Settings.Between) > 0 && !c.Target.Embedded() {
		targetArgs, _ := expandArgs(c.TargetArgs(), r.Getenv)
		if err = r.Exec.Maintain(ctx, targetArgs, c.Settings.Between); err != nil {
			err = fmt.Errorf("%s before the cell: %w", strings.Join(c.Settings.Between, " and "), err)
		}
	}
	if err == nil && c.Settings.Before != "" {
		err = r.hook(ctx, c, "before", c.Settings.Before, "")
	}
	runID := ""
	if err == nil {
		runID, err = r.Exec.Run(ctx, args, tag)
	}
	if ctx.Err() != nil {
		return false, fmt.Errorf("plan interrupted during cell %d (%s): it runs again next time: %w", c.Index, c.Name, ctx.Err())
	}
	if err != nil && runID == "" {
		if rerr := r.recordFailure(c, tag, err); rerr != nil {
			return false, rerr
		}
	}
	if err != nil {
		r.notef("cell %d failed: %s", c.Index, oneLine(err.Error()))
	} else if init {
		loaded[initKey] = true
	}
	if c.Settings.After != "" {
		if herr := r.hook(ctx, c, "after", c.Settings.After, runID); herr != nil {
			r.notef("cell %d: %v", c.Index, herr)
		}
	}
	return err == nil, nil
}

// recordFailure records a cell that failed before its run was recorded
// (a hook, maintenance, bad input) as a failed run, so the store says so.
func (r *Runner) recordFailure(c *Cell, tag store.PlanTag, cause error) error {
	w, err := r.Store.Create(store.RunSpec{Workload: c.Workload.Workload, Label: c.Target.Label, PlanTag: tag,
		Target: c.Target.Name, Embedded: c.Target.Embedded()})
	if err != nil {
		return fmt.Errorf("record the failure of cell %d: %w", c.Index, err)
	}
	now := time.Now()
	sum := metrics.Summary{Status: metrics.StatusFailed, StopReason: oneLine(cause.Error()),
		Workload: c.Workload.Workload, Label: c.Target.Label, Start: now, End: now}
	return errors.Join(w.Finish(sum, nil), w.Close())
}

func (r *Runner) eta() string {
	s, err := State(r.Plan, r.Store)
	if err != nil {
		return ""
	}
	if eta, ok := s.ETA(); ok && eta > 0 {
		return fmt.Sprintf(", plan ETA %s", eta.Round(time.Second))
	}
	return ""
}

func (r *Runner) notef(format string, args ...any) {
	if r.Notef != nil {
		r.Notef(format, args...)
	}
}

// lock takes the plan's lock file in the results directory: one runner per
// plan at a time. The kernel drops it when the process dies.
func (r *Runner) lock() (func(), error) {
	path := filepath.Join(r.Store.Dir(), ".plan-"+lockWord(r.Plan.Name)+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("plan lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: another pgarena runs plan %s in %s", ErrBusy, r.Plan.Name, r.Store.Dir())
		}
		return nil, fmt.Errorf("plan lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

func lockWord(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
