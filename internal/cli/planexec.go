package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/plan"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/workload"
)

// planHooks connect a run command to the plan that runs it in-process.
type planHooks struct {
	tag   store.PlanTag // recorded in the run's spec
	runID string        // set when the run is recorded
	// check, when set, ends the run command after its flags are parsed and
	// validated (plan validate, plan maintenance).
	check func(cmd *cobra.Command, f *runFlags, w workload.Workload) error
}

// maintenanceTimeout bounds CHECKPOINT and VACUUM between cells.
const maintenanceTimeout = 30 * time.Minute

// planExec runs plan cells as run commands of this pgarena, in-process,
// with the run command's own flag parsing: every run flag works in a plan.
type planExec struct {
	a       *app
	results string // --results of the plan command
	out     io.Writer
}

// sub is a fresh invocation of pgarena for one run command.
func (e *planExec) sub(out io.Writer) *app {
	return &app{Main: Main{Stdout: out, Stderr: out, Env: e.a.Env}}
}

// execute runs "run ARGS..." on s; the results directory is the plan's.
func (e *planExec) execute(ctx context.Context, s *app, args []string) error {
	full := append([]string{"run"}, args...)
	if e.results != "" {
		full = append(full, "--results="+e.results)
	}
	s.args = full
	root := s.rootCommand()
	root.SetArgs(full)
	root.SetOut(s.Stdout)
	root.SetErr(s.Stderr)
	return root.ExecuteContext(ctx)
}

// Check implements plan.Executor: parse and validate without running.
func (e *planExec) Check(args []string) (map[string]bool, error) {
	s := e.sub(io.Discard)
	params := map[string]bool{}
	s.plan.check = func(cmd *cobra.Command, f *runFlags, w workload.Workload) error {
		if _, err := parsePgSet(f.target.pgSet); err != nil {
			return err
		}
		if fs, ok := w.(workload.Flagser); ok {
			fs.Flags().VisitAll(func(fl *pflag.Flag) { params[fl.Name] = true })
		}
		return nil
	}
	if err := e.execute(context.Background(), s, args); err != nil {
		return nil, errors.New(oneLine(err.Error()))
	}
	return params, nil
}

// Run implements plan.Executor: one recorded run, tagged with the cell.
func (e *planExec) Run(ctx context.Context, args []string, tag store.PlanTag) (string, error) {
	s := e.sub(e.out)
	s.plan.tag = tag
	err := e.execute(ctx, s, args)
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
	s.plan.check = func(cmd *cobra.Command, f *runFlags, w workload.Workload) error {
		ctx, cancel := context.WithTimeout(ctx, maintenanceTimeout)
		defer cancel()
		tg, teardown, err := s.provision(ctx, &f.target)
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
	// The workload is any registered one: only the target flags matter.
	args := append([]string{workload.All()[0].Name}, targetArgs...)
	return e.execute(ctx, s, args)
}
