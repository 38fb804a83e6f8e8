package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/plan"
	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/workload"
)

// planHooks connect a run to the plan that runs it in-process.
type planHooks struct {
	tag   store.PlanTag // recorded in the run's spec
	runID string        // set when the run is recorded
}

// maintenanceTimeout bounds CHECKPOINT and VACUUM between cells.
const maintenanceTimeout = 30 * time.Minute

// planExec runs plan cells in-process: a cell's arguments become a run
// configuration (internal/runconfig), checked and run as the run command
// runs its own, so every run flag works in a plan; no command is built.
type planExec struct {
	a       *app
	results string // --results of the plan command
	out     io.Writer
}

// sub is a fresh invocation of pgarena for one run.
func (e *planExec) sub(out io.Writer) *app {
	return &app{Main: Main{Stdout: out, Stderr: out, Env: e.a.Env}}
}

// config is the run configuration of "run ARGS..."; the results directory
// is the plan's.
func (e *planExec) config(s *app, args []string) (*runconfig.Config, error) {
	cfg, err := runconfig.Parse(args, os.ReadFile)
	if err != nil {
		return nil, usagef("%s", joinLines(err))
	}
	if e.results != "" {
		cfg.Results = e.results
	}
	s.args = append([]string{"run"}, args...)
	return cfg, nil
}

// Check implements plan.Executor: parse and validate without running.
func (e *planExec) Check(args []string) (map[string]bool, error) {
	cfg, err := e.config(e.sub(io.Discard), args)
	if err == nil {
		_, _, err = prepare(cfg)
	}
	if err != nil {
		return nil, errors.New(oneLine(err.Error()))
	}
	params := map[string]bool{}
	if m, ok := workload.Get(cfg.Workload); ok {
		if fs, ok := m.New().(workload.Flagser); ok {
			fs.Flags().VisitAll(func(fl *pflag.Flag) { params[fl.Name] = true })
		}
	}
	return params, nil
}

// Run implements plan.Executor: one recorded run, tagged with the cell.
func (e *planExec) Run(ctx context.Context, args []string, tag store.PlanTag) (string, error) {
	s := e.sub(e.out)
	s.plan.tag = tag
	cfg, err := e.config(s, args)
	if err == nil {
		err = s.runConfig(ctx, cfg)
	}
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) && ee.msg == "" {
			err = fmt.Errorf("exit code %d", ee.code)
		}
		err = errors.New(oneLine(err.Error()))
	}
	return s.plan.runID, err
}

// Maintain implements plan.Executor: CHECKPOINT and VACUUM ANALYZE on the
// target the arguments name, each within maintenanceTimeout.
func (e *planExec) Maintain(ctx context.Context, targetArgs []string, what []string) error {
	s := e.sub(io.Discard)
	cfg, err := runconfig.Parse(targetArgs, os.ReadFile) // no workload: the target flags
	if err != nil {
		return usagef("%s", joinLines(err))
	}
	ctx, cancel := context.WithTimeout(ctx, maintenanceTimeout)
	defer cancel()
	tg, teardown, err := s.provision(ctx, runTarget(cfg))
	if err != nil {
		return err
	}
	defer teardown()
	conn, err := tg.Connect(ctx, "pgarena-plan")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, m := range what {
		stmt := map[string]string{plan.Checkpoint: "CHECKPOINT", plan.Vacuum: "VACUUM ANALYZE"}[m]
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}
