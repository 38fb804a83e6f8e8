package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/waittest"
)

// TestServerStoppedMidRun: the server goes away during a run; the run
// neither hangs nor loses what it measured, and the outage shows.
//
// internal/target/local cannot restart a temporary cluster once stopped
// (Start refuses its data directory: the marker sits one level up), so the
// server stays down for the rest of the run.
func TestServerStoppedMidRun(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t, nil)
	dsn := c.DSN("postgres")
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()

	const runFor = 6 * time.Second
	done := make(chan result, 1)
	t0 := time.Now()
	go func() {
		done <- pgarena(t, nil, "run", "tpcb", "-c", "4", "-T", "6s", "--interval", "200ms", "-P", "1",
			"--dsn", dsn, "--json", "--results", results)
	}()
	// Stop the server once the run has measured a few intervals with every
	// client connected (about 1.5 s into the run at 200 ms).
	waitIntervals(t, results, 7, 60*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := c.Stop(ctx)
	cancel()
	if err != nil {
		t.Fatalf("stopping the server: %v", err)
	}
	stoppedAt := time.Since(t0)

	var r result
	select {
	case r = <-done:
	case <-time.After(runFor + 30*time.Second):
		t.Fatal("the run did not end after the server was stopped")
	}
	if r.code != ExitOK && r.code != ExitFailed {
		t.Fatalf("exit code %d, want 0 or 1\n%s", r.code, r)
	}
	// -T plus the driver's drain (10 s) plus setup.
	if d := time.Since(t0); d > runFor+15*time.Second {
		t.Errorf("the run took %s after a server stop at %s", d, stoppedAt)
	}
	t.Logf("run ended after %s (server stopped at %s)\n%s", time.Since(t0).Round(time.Millisecond), stoppedAt.Round(time.Millisecond), r.stderr)

	sum := summaryJSON(t, r.stdout)
	errs, _ := sum["errors"].(map[string]any)
	lost := 0.0
	for _, k := range []string{"admin_shutdown", "connection_lost"} {
		if v, ok := errs[k].(float64); ok {
			lost += v
		}
	}
	if lost == 0 {
		t.Errorf("the summary shows no admin_shutdown or connection_lost failures: errors %v", errs)
	}
	if num(t, sum, "failed") <= 0 || num(t, sum, "transactions") <= 0 {
		t.Errorf("failed %v, transactions %v: want both > 0", sum["failed"], sum["transactions"])
	}
	if !strings.Contains(r.stderr, "failed by class:") {
		t.Errorf("the text summary does not break failures down by class:\n%s", r.stderr)
	}

	sj := mustRun(t, "show", "last", "--json", "--results", results)
	if m := summaryJSON(t, sj.stdout); str(t, m, "run_id") != str(t, sum, "run_id") || num(t, m, "failed") != num(t, sum, "failed") {
		t.Errorf("show last --json disagrees with the run's summary: %v vs %v", m["failed"], sum["failed"])
	}

	st, err := store.Open(results)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.Load("last")
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Intervals) < 20 {
		t.Errorf("%d intervals recorded for a 6 s run at 200 ms", len(run.Intervals))
	}
	full, dropped, failing := false, false, false
	for _, iv := range run.Intervals {
		if iv.Connected == 4 && !dropped {
			full = true
		}
		if full && iv.Connected < 4 {
			dropped = true
		}
		for _, tx := range iv.Tx {
			if dropped && tx.Errors.Total() > 0 {
				failing = true
			}
		}
	}
	if !full || !dropped || !failing {
		var conns []int
		for _, iv := range run.Intervals {
			conns = append(conns, iv.Connected)
		}
		t.Errorf("the intervals do not show the outage (all connected %v, dropped %v, failures after %v): connected %v",
			full, dropped, failing, conns)
	}
	if last := run.Intervals[len(run.Intervals)-1]; last.Connected != 0 {
		t.Errorf("%d clients connected at the end, with the server down", last.Connected)
	}
}

// TestKilledRunIsReadable: a pgarena killed with SIGKILL mid-run leaves a
// run that reads back as interrupted with what it recorded.
func TestKilledRunIsReadable(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()

	cmd := osexec.Command(os.Args[0], "run", "tpcb", "-c", "2", "-T", "60s", "--dsn", dsn,
		"--results", results, "--interval", "200ms")
	cmd.Env = append(cleanEnv(), cliMainEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // runs after the one below has reaped the child
		if t.Failed() {
			t.Logf("pgarena's stderr:\n%s", errb.String())
		}
	})
	waited := false
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})

	intervals := waitIntervals(t, results, 3, 60*time.Second)

	// While it runs, it lists as running.
	if l := mustRun(t, "list", "--results", results); !strings.Contains(l.stdout, "running") {
		t.Errorf("list during the run:\n%s", l.stdout)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	waited = true
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("pgarena did not die of SIGKILL: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(intervals), store.SummaryFile)); !os.IsNotExist(err) {
		t.Fatalf("a killed run has a summary.json: %v", err)
	}

	s := mustRun(t, "show", "last", "--results", results)
	for _, w := range []string{"status: interrupted", "intervals recorded", "number of transactions actually processed: "} {
		if !strings.Contains(s.stdout, w) {
			t.Errorf("show last lacks %q:\n%s", w, s.stdout)
		}
	}
	if strings.Contains(s.stdout, " 0 intervals recorded") {
		t.Errorf("show last shows no intervals:\n%s", s.stdout)
	}
	sj := mustRun(t, "show", "last", "--json", "--results", results)
	m := summaryJSON(t, sj.stdout)
	if str(t, m, "status") != "interrupted" {
		t.Errorf("status %q, want interrupted", m["status"])
	}
	if num(t, m, "transactions") <= 0 || num(t, m, "tps") <= 0 {
		t.Errorf("interrupted run: transactions %v, tps %v", m["transactions"], m["tps"])
	}
	if str(t, m, "run_id") != filepath.Base(filepath.Dir(intervals)) {
		t.Errorf("run_id %v, want %s", m["run_id"], filepath.Base(filepath.Dir(intervals)))
	}
	l := mustRun(t, "list", "--results", results)
	if !strings.Contains(l.stdout, "interrupted") {
		t.Errorf("list after the kill:\n%s", l.stdout)
	}
	// list shows the TPS show summarises from the intervals.
	if tps := fmt.Sprintf(" %.1f ", num(t, m, "tps")); !strings.Contains(l.stdout, tps) {
		t.Errorf("list after the kill does not show show's TPS%s:\n%s", tps, l.stdout)
	}
	st, err := store.Open(results)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.Load("last")
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Intervals) < 3 || run.Status != "interrupted" {
		t.Errorf("loaded %d intervals, status %s", len(run.Intervals), run.Status)
	}
}

// waitIntervals waits until the one run in results has recorded n
// intervals and returns its intervals.jsonl.
func waitIntervals(t *testing.T, results string, n int, timeout time.Duration) string {
	t.Helper()
	var path string
	waittest.Until(t, fmt.Sprintf("the run to record %d intervals", n), timeout, func() (bool, string) {
		paths, _ := filepath.Glob(filepath.Join(results, "*", store.IntervalsFile))
		if len(paths) != 1 {
			return false, fmt.Sprintf("interval files %v", paths)
		}
		path = paths[0]
		b, err := os.ReadFile(path)
		return err == nil && strings.Count(string(b), "\n") >= n, fmt.Sprintf("%d recorded", strings.Count(string(b), "\n"))
	})
	return path
}

// TestInterruptedRun: cancelling the context (Ctrl-C in cmd/pgarena) ends
// the run early with exit 130 and a complete record of what ran.
func TestInterruptedRun(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		done <- pgarenaCtx(t, ctx, nil, "run", "tpcb", "-c", "2", "-T", "60s", "--interval", "200ms",
			"--dsn", dsn, "--results", results)
	}()
	waitIntervals(t, results, 3, 60*time.Second)
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not stop within 30 s of the interrupt")
	}
	if r.code != ExitInterrupted || !strings.Contains(r.stderr, "pgarena: run stopped early (interrupted)") {
		t.Errorf("interrupted run:\n%s", r)
	}
	if !strings.Contains(r.stdout, "status: stopped: interrupted") {
		t.Errorf("the summary does not say the run was stopped:\n%s", r.stdout)
	}
	m := summaryJSON(t, mustRun(t, "show", "last", "--json", "--results", results).stdout)
	if str(t, m, "status") != "stopped" || num(t, m, "transactions") <= 0 {
		t.Errorf("show last --json: status %v, transactions %v", m["status"], m["transactions"])
	}
	if c := mustRun(t, "check", "tpcb", "--dsn", dsn); !strings.Contains(c.stdout, "ok") {
		t.Errorf("check after an interrupted run: %s", c)
	}
}
