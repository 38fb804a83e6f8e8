package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// hook runs a cell's shell hook (sh -c) with its deadline. The hook sees
// the runner's environment plus PGARENA_PLAN, PGARENA_CELL,
// PGARENA_CELL_NAME, PGARENA_REPEAT, PGARENA_TARGET, PGARENA_WORKLOAD and,
// after the run, PGARENA_RUN. On the deadline its whole process group is
// killed.
func (r *Runner) hook(ctx context.Context, c *Cell, when, script, runID string) error {
	timeout := DefaultHookTimeout
	if c.Settings.HookTimeout != nil {
		timeout = *c.Settings.HookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Env = append(append([]string(nil), r.Env...),
		"PGARENA_PLAN="+r.Plan.Name, "PGARENA_CELL="+c.ID, "PGARENA_CELL_NAME="+c.Name,
		"PGARENA_REPEAT="+strconv.Itoa(c.Repeat), "PGARENA_TARGET="+c.Target.Name,
		"PGARENA_WORKLOAD="+c.Workload.Name, "PGARENA_RUN="+runID)
	out := r.HookOutput
	if out == nil {
		out = io.Discard
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	switch {
	case err == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s hook did not finish within %s (hook-timeout): killed", when, timeout)
	}
	return fmt.Errorf("%s hook failed: %v", when, err)
}
