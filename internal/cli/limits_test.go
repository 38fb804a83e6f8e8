package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestWrongArgumentsAreUsage: a wrong argument count or an unknown command
// is bad usage: exit 2, one line naming the command to look up.
func TestWrongArgumentsAreUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "pgarena show --help"},
		{[]string{"merge"}, "pgarena merge --help"},
		{[]string{"compare"}, "pgarena compare --help"},
		{[]string{"plan", "run"}, "pgarena plan run --help"},
		{[]string{"cluster", "list"}, `unknown command "list" for "pgarena cluster"`},
		{[]string{"nosuchcmd"}, `unknown command "nosuchcmd" for "pgarena"`},
		{[]string{"serve", "extra"}, `unknown command "extra" for "pgarena serve"`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			wantUsage(t, pgarena(t, nil, c.args...), c.want)
		})
	}
}

// TestUnknownWorkloadIsNamed: an unknown workload is named as such, also
// with flags only workloads have, and in a plan.
func TestUnknownWorkloadIsNamed(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := filepath.Join(t.TempDir(), "results")
	wantUsage(t, pgarena(t, nil, "run", "nosuchworkload", "--dsn", dsn, "--results", results), `unknown workload "nosuchworkload"`)
	plan := filepath.Join(t.TempDir(), "p.yaml")
	body := fmt.Sprintf("targets:\n  - name: db\n    dsn: %q\nworkloads:\n  - name: w\n    workload: nosuchworkload\n", dsn)
	if err := os.WriteFile(plan, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	wantUsage(t, pgarena(t, nil, "plan", "validate", plan), `unknown workload "nosuchworkload"`)
	noRuns(t, results)
}

// TestPlanCellsAreBounded: a plan of 100 million cells is refused at once
// in one line, not expanded until memory runs out.
func TestPlanCellsAreBounded(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	plan := filepath.Join(t.TempDir(), "p.yaml")
	body := fmt.Sprintf("repeats: 100000000\ntargets:\n  - name: db\n    dsn: %q\nworkloads:\n  - tpcb\n", dsn)
	if err := os.WriteFile(plan, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(t.TempDir(), "results")
	for _, args := range [][]string{{"validate", plan}, {"run", plan, "--results", results}} {
		r := pgarena(t, nil, append([]string{"plan"}, args...)...)
		wantUsage(t, r, "100,000,000 cells", "lower repeats")
		if r.elapsed > 10*time.Second {
			t.Errorf("plan %s took %s to refuse", args[0], r.elapsed)
		}
	}
	noRuns(t, results)
}

// TestZeroCountsRefused: counts that must be positive are refused when
// zero or negative instead of silently replaced: --pool-size, --agents,
// merge --segments, and a --token too short to keep anyone out.
func TestZeroCountsRefused(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	run := []string{"run", "tpcb", "-c", "2", "-T", "1s", "--dsn", dsn, "--results", results}
	wantUsage(t, pgarena(t, nil, append(run, "--via", "pgbouncer", "--pool-size", "0")...), "--pool-size must be at least 1")
	wantUsage(t, pgarena(t, nil, append(run, "--agents", "0")...), "--agents N: N must be at least 1")
	wantUsage(t, pgarena(t, nil, append(run, "--agents", "-1")...), "--agents N: N must be at least 1")
	noRuns(t, results)
	startAt := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
	mustRun(t, append(run, "--segment", "0/1", "--start-at", startAt)...)
	wantUsage(t, pgarena(t, nil, "merge", "last", "--segments", "0", "--results", results), "--segments must be at least 1")
	// Refused before it listens: a served token would wait for Ctrl-C.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wantUsage(t, pgarenaCtx(t, ctx, nil, "serve", "--token", "a", "--addr", "127.0.0.1:0", "--results", results),
		"--token must be at least 16 characters")
}

// TestDiskFullMidRun: when the results directory fills up during a run,
// the run ends at once with exit 1 (a failure, not an interrupt) and says
// so in one line, once.
func TestDiskFullMidRun(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	disk := t.TempDir()
	if err := unix.Mount("tmpfs", disk, "tmpfs", 0, "size=512k"); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(disk, 0); err != nil {
			t.Errorf("unmount %s: %v", disk, err)
		}
	})
	results := filepath.Join(disk, "results")
	done := make(chan result, 1)
	go func() {
		done <- pgarena(t, nil, "run", "tpcb", "-c", "2", "-T", "60s", "--interval", "50ms", "--dsn", dsn, "--results", results)
	}()
	waitIntervals(t, results, 3, time.Minute)
	// Fill the disk: the next interval finds no room.
	f, err := os.Create(filepath.Join(disk, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the run did not end within a minute of the disk filling up")
	}
	if r.code != ExitFailed {
		t.Errorf("exit %d, want %d\n%s", r.code, ExitFailed, r)
	}
	if n := strings.Count(r.stdout+r.stderr, "no space left on device"); n != 1 {
		t.Errorf("the disk-full line is printed %d times, want once\n%s", n, r)
	}
	if !strings.Contains(r.stderr, "pgarena: results directory") || !strings.Contains(r.stdout, "status: failed") {
		t.Errorf("the run does not end as failed, saying the results directory is full\n%s", r)
	}
}

// TestInterruptedTPCCKeepsFigures: NOPM and TPM of a tpcc run interrupted
// (Ctrl-C in-process; SIGTERM sent to a pgarena process) are computed for
// the time it ran.
func TestInterruptedTPCCKeepsFigures(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"interrupt", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dsn := pgtest.DSN(t)
			mustRun(t, "init", "tpcc", "-w", "1", "--dsn", dsn)
			results := t.TempDir()
			args := []string{"run", "tpcc", "-c", "2", "-T", "60s", "--interval", "200ms", "--json", "--dsn", dsn, "--results", results}
			var r result
			if how == "interrupt" {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan result, 1)
				go func() { done <- pgarenaCtx(t, ctx, nil, args...) }()
				waitIntervals(t, results, 5, time.Minute)
				cancel()
				r = <-done
			} else {
				cmd := osexec.Command(os.Args[0], args...)
				cmd.Env = append(cleanEnv(), cliMainEnv+"=1")
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				waitIntervals(t, results, 5, time.Minute)
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				_ = cmd.Wait()
				r = result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
			}
			if r.code != ExitInterrupted {
				t.Errorf("exit %d, want %d\n%s", r.code, ExitInterrupted, r)
			}
			if strings.Contains(r.stderr, "figures of merit") {
				t.Errorf("the figures were lost:\n%s", r.stderr)
			}
			m := summaryJSON(t, r.stdout)
			for _, k := range []string{"nopm", "tpm"} {
				if _, ok := m[k]; !ok {
					t.Errorf("the interrupted run's summary has no %s:\n%s", k, r.stdout)
					continue
				}
				if num(t, m, k) <= 0 {
					t.Errorf("%s = %v, want > 0", k, m[k])
				}
			}
		})
	}
}
