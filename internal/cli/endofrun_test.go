package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/waittest"
)

// lockTPCB starts a run of pgarena with args (results in results; it must
// be a tpcb run of 4 clients on dsn) in the background and, once it has
// recorded an interval, locks the tables a tpcb transaction updates in
// another session until the run has ended: every client is stuck from then
// on, at its transaction's first update. It returns the run's result once
// pgarena has exited; cancel interrupts it (Ctrl-C).
//
// With pgbench_branches alone locked, a client could wait instead for
// another one's row lock on a teller; cancelling that other one at the end
// frees it, and the cancel request meant for it can then land between two
// statements, where the server ignores it (the next statement waits for the
// lock until the socket is cut, failing without the server's 57014).
func lockTPCB(t *testing.T, ctx context.Context, dsn, results string, args ...string) <-chan result {
	t.Helper()
	done, _ := lockTables(t, ctx, dsn, results, "pgbench_accounts, pgbench_tellers, pgbench_branches", 4, false, args...)
	return done
}

// lockTables is lockTPCB locking tables (a list) until the run has
// ended, once it has stuck clients waiting for them. With giveUp (a run
// of one step), false (the locks released at once, the run's result
// still to come) if its measured time ended before they were: on a loaded
// host its first interval can be recorded late, near or after its end.
func lockTables(t *testing.T, ctx context.Context, dsn, results, tables string, stuck int, giveUp bool, args ...string) (<-chan result, bool) {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- pgarenaCtx(t, ctx, nil, args...) }()
	intervals := waitIntervals(t, results, 1, time.Minute)
	locker := connect(t, dsn)
	exec(t, locker, "begin")
	start := time.Now()
	exec(t, locker, "lock table "+tables+" in access exclusive mode")
	t.Logf("locked %s in %s", tables, time.Since(start).Round(time.Millisecond))
	if !giveUp {
		intervals = ""
	}
	late := !waitStuckOrEnd(t, connect(t, dsn), stuck, intervals)
	if late {
		exec(t, locker, "rollback")
	}
	out := make(chan result, 1)
	go func() {
		r := <-done
		_, _ = locker.Exec(context.Background(), "rollback")
		out <- r
	}()
	return out, !late
}

// waitStuck waits until n sessions other than the checking one wait for a
// lock.
func waitStuck(t *testing.T, conn *pgx.Conn, n int) {
	t.Helper()
	waitStuckOrEnd(t, conn, n, "")
}

// waitStuckOrEnd is waitStuck that gives up (false) once the intervals
// file at intervals (if not "") has a drain interval: the measured time
// is over.
func waitStuckOrEnd(t *testing.T, conn *pgx.Conn, n int, intervals string) (stuck bool) {
	t.Helper()
	waittest.Until(t, fmt.Sprintf("%d sessions waiting for a lock", n), 30*time.Second, func() (bool, string) {
		var got int
		var sessions string
		if err := conn.QueryRow(context.Background(), `select count(*) filter (where wait_event_type = 'Lock'),
			coalesce(string_agg(format('%s %s:%s %s', application_name, wait_event_type, wait_event, left(query, 40)), '; '), '')
			from pg_stat_activity where pid <> pg_backend_pid() and datname = current_database()`).Scan(&got, &sessions); err != nil {
			t.Fatal(err)
		}
		if stuck = got >= n; stuck {
			return true, ""
		}
		if intervals != "" {
			if b, err := os.ReadFile(intervals); err == nil && strings.Contains(string(b), `"drain":true`) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d wait (%s)", got, sessions)
	})
	return stuck
}

// drainOf is the summary's "drain" object.
func drainOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	d, ok := m["drain"].(map[string]any)
	if !ok {
		t.Fatalf("the summary has no drain object: %v", m)
	}
	return d
}

// TestStuckEndIsCounted: transactions stuck behind a lock when -T ends are
// counted as unfinished with their time so far, the 10 s drain that
// cancels them is reported apart and is not in the duration or the tps,
// and the run says it had to cancel them, in its text summary, --json and
// summary.json, its status following --max-error-rate (here 0.01%: 4
// cancelled of a few hundred degrade it, exit 1). The same holds for an
// open-loop schedule (-R), whose measured time is the schedule's.
func TestStuckEndIsCounted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"closed", nil},
		{"schedule", []string{"-R", "400"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dsn := pgtest.DSN(t)
			mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
			results := t.TempDir()
			args := append([]string{"run", "tpcb", "-c", "4", "-T", "4s", "--interval", "200ms", "--max-error-rate", "0.01",
				"--json", "--dsn", dsn, "--results", results}, tc.args...)
			r := <-lockTPCB(t, context.Background(), dsn, results, args...)
			if r.code != ExitFailed || !strings.Contains(r.stderr, "run degraded") {
				t.Errorf("exit %d, want %d (degraded: the cancelled count as failed)\n%s", r.code, ExitFailed, r)
			}
			m := summaryJSON(t, r.stdout)
			if d := num(t, m, "duration_s"); d < 3.99 || d > 4.01 {
				t.Errorf("duration_s %v, want 4 (the drain is not measured time)", d)
			}
			if tps, n := num(t, m, "tps"), num(t, m, "transactions"); n <= 0 || tps < n/4.01 || tps > n/3.99 {
				t.Errorf("tps %v for %v transactions: want them over 4 s", tps, n)
			}
			if u := num(t, m, "unfinished"); u != 4 {
				t.Errorf("unfinished %v, want 4 (the clients stuck at the end)", u)
			}
			d := drainOf(t, m)
			if num(t, d, "cancelled") != 4 || num(t, d, "committed_in_drain") != 0 || num(t, d, "drain_s") < 9.9 {
				t.Errorf("drain %v: want 4 cancelled after a 10 s drain", d)
			}
			// The cancelled keep their class and what the server said.
			if errs, _ := d["errors"].(map[string]any); num(t, errs, "timeout") != 4 {
				t.Errorf("drain errors %v, want 4 timeout (cancelled)", d["errors"])
			}
			if ex := fmt.Sprint(d["error_examples"]); !strings.Contains(ex, "57014") || !strings.Contains(ex, "canceling statement") {
				t.Errorf("drain error_examples %s, want the server's 57014 and message", ex)
			}
			if !strings.Contains(r.stderr, "timeout, first at") || !strings.Contains(r.stderr, "ERROR 57014: canceling statement due to user request") {
				t.Errorf("the text summary does not say what the cancelled said:\n%s", r.stderr)
			}
			if so := num(t, d, "so_far_max_ms"); so < 500 || so > 4000 {
				t.Errorf("so_far_max_ms %v: want the time the clients had been stuck by the end (0.5 to 4 s)", so)
			}
			if str(t, m, "status") != "degraded" || !strings.Contains(str(t, m, "stop_reason"), "cancelled") {
				t.Errorf("status %v (%v), want degraded saying transactions were cancelled", m["status"], m["stop_reason"])
			}
			if !strings.Contains(r.stderr, "number of transactions unfinished at the end: 4") || !strings.Contains(r.stderr, "4 cancelled") {
				t.Errorf("the text summary does not count the unfinished and cancelled:\n%s", r.stderr)
			}
			b, err := os.ReadFile(filepath.Join(results, str(t, m, "run_id"), store.SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			var saved map[string]any
			if err := json.Unmarshal(b, &saved); err != nil {
				t.Fatal(err)
			}
			if num(t, saved, "unfinished") != 4 || num(t, drainOf(t, saved), "cancelled") != 4 || str(t, saved, "status") != "degraded" {
				t.Errorf("summary.json: unfinished %v, drain %v, status %v", saved["unfinished"], saved["drain"], saved["status"])
			}
		})
	}
}

// TestInterruptDuringDrain: Ctrl-C while the end of a run waits for stuck
// transactions stops the run at once: exit 130, status stopped, the
// measured time still the one asked for.
func TestInterruptDuringDrain(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := lockTPCB(t, ctx, dsn, results, "run", "tpcb", "-c", "4", "-T", "2s", "--interval", "200ms",
		"--json", "--dsn", dsn, "--results", results)
	// The drain has begun when an interval after the measured time is
	// recorded.
	waittest.Until(t, "a drain interval", time.Minute, func() (bool, string) {
		paths, _ := filepath.Glob(filepath.Join(results, "*", store.IntervalsFile))
		if len(paths) != 1 {
			return false, fmt.Sprintf("interval files %v", paths)
		}
		b, err := os.ReadFile(paths[0])
		return err == nil && strings.Contains(string(b), `"drain":true`), fmt.Sprintf("%d intervals", strings.Count(string(b), "\n"))
	})
	t0 := time.Now()
	cancel()
	r := <-done
	if r.code != ExitInterrupted {
		t.Errorf("exit %d, want %d\n%s", r.code, ExitInterrupted, r)
	}
	if waited := time.Since(t0); waited > 5*time.Second {
		t.Errorf("the interrupted drain took %s more", waited)
	}
	m := summaryJSON(t, r.stdout)
	if str(t, m, "status") != "stopped" || !strings.Contains(str(t, m, "stop_reason"), "during the drain") {
		t.Errorf("status %v (%v), want stopped during the drain", m["status"], m["stop_reason"])
	}
	if d := num(t, m, "duration_s"); d < 1.99 || d > 2.01 {
		t.Errorf("duration_s %v, want 2", d)
	}
	if num(t, m, "unfinished") != 4 || num(t, drainOf(t, m), "cancelled") != 4 {
		t.Errorf("unfinished %v, drain %v: want 4 cancelled", m["unfinished"], m["drain"])
	}
}

// TestInterruptStuckTransactions: Ctrl-C of a -t run whose clients are
// stuck counts their transactions as unfinished and cancelled, with their
// time so far, and exits 130.
func TestInterruptStuckTransactions(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := lockTPCB(t, ctx, dsn, results, "run", "tpcb", "-c", "4", "-t", "1000000", "--interval", "200ms",
		"--json", "--dsn", dsn, "--results", results)
	cancel()
	r := <-done
	if r.code != ExitInterrupted {
		t.Errorf("exit %d, want %d\n%s", r.code, ExitInterrupted, r)
	}
	m := summaryJSON(t, r.stdout)
	d := drainOf(t, m)
	if num(t, m, "unfinished") != 4 || num(t, d, "cancelled") != 4 || num(t, d, "so_far_max_ms") <= 0 {
		t.Errorf("unfinished %v, drain %v: want 4 cancelled with their time so far", m["unfinished"], d)
	}
}

// TestStoppedPoolerAtEnd: a pooler frozen (SIGSTOP) under a run leaves
// every client stuck at the end of -T: the run still measures 3 s, counts
// the 4 transactions unfinished, cancels them after the drain and says so.
func TestStoppedPoolerAtEnd(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	b := pgtest.StartBouncer(t, pgtest.Cluster(t), connect(t, dsn).Config().Database, "session", 4)
	cfg, err := pgx.ParseConfig(b.DSN())
	if err != nil {
		t.Fatal(err)
	}
	pidText, err := os.ReadFile(filepath.Join(cfg.Host, "pgbouncer.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	done := make(chan result, 1)
	go func() {
		done <- pgarena(t, nil, "run", "tpcb", "-c", "4", "-T", "3s", "--interval", "200ms", "--max-error-rate", "100",
			"--json", "--dsn", b.DSN(), "--results", results)
	}()
	waitIntervals(t, results, 2, time.Minute)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := func() { _ = syscall.Kill(pid, syscall.SIGCONT) }
	t.Cleanup(cont) // before the pooler's teardown, which runs later
	r := <-done
	cont()
	if r.code != ExitOK {
		t.Errorf("exit %d, want 0 (--max-error-rate 100)\n%s", r.code, r)
	}
	m := summaryJSON(t, r.stdout)
	if d := num(t, m, "duration_s"); d < 2.99 || d > 3.01 {
		t.Errorf("duration_s %v, want 3", d)
	}
	if num(t, m, "unfinished") != 4 || num(t, drainOf(t, m), "cancelled") != 4 {
		t.Errorf("unfinished %v, drain %v: want 4 cancelled", m["unfinished"], m["drain"])
	}
	if !strings.Contains(r.stderr, "4 cancelled") {
		t.Errorf("the text summary does not say 4 were cancelled:\n%s", r.stderr)
	}
}

// TestInterruptDuringCheck: Ctrl-C after the measured time, while --check
// waits for a lock, exits 130 like any interrupt (not 1, a failed check).
func TestInterruptDuringCheck(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := lockTPCB(t, ctx, dsn, results, "run", "tpcb", "-c", "4", "-T", "3s", "--interval", "200ms", "--check",
		"--dsn", dsn, "--results", results)
	// The summary is recorded before the checks run; the check then waits
	// for the lock, the clients being gone.
	waittest.Until(t, "the run's summary", time.Minute, func() (bool, string) {
		paths, _ := filepath.Glob(filepath.Join(results, "*", store.SummaryFile))
		return len(paths) == 1, fmt.Sprintf("summary files %v", paths)
	})
	waitStuck(t, connect(t, dsn), 1)
	cancel()
	r := <-done
	if r.code != ExitInterrupted || !strings.Contains(r.stderr, "interrupted after the measured time") {
		t.Errorf("exit %d, want %d, saying it was interrupted after the measured time\n%s", r.code, ExitInterrupted, r)
	}
}

// TestInterruptDuringInit: Ctrl-C while init loads exits 130 too.
func TestInterruptDuringInit(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- pgarenaCtx(t, ctx, nil, "init", "tpcb", "-s", "50", "--dsn", dsn) }()
	conn := connect(t, dsn)
	waittest.Until(t, "init to start loading (a COPY in pg_stat_progress_copy)", time.Minute, func() (bool, string) {
		var n int
		if err := conn.QueryRow(context.Background(), "select count(*) from pg_stat_progress_copy where datname = current_database()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0, ""
	})
	cancel()
	if r := <-done; r.code != ExitInterrupted || !strings.Contains(r.stderr, "pgarena: interrupted") {
		t.Errorf("exit %d, want %d, saying it was interrupted\n%s", r.code, ExitInterrupted, r)
	}
}

// TestDrainTimeout: --drain-timeout sets how long the transactions stuck
// at the end of the measured time may finish (1s here, and the run ends
// about a second after the measured time), 0 cancels them at once; the run
// records it in its configuration; a negative one is bad input naming the
// flag.
func TestDrainTimeout(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	for _, tc := range []struct {
		timeout  string
		min, max float64 // the drain's length, s
	}{
		{"1s", 0.9, 2.5},
		{"0", 0, 1.5},
	} {
		results := t.TempDir()
		r := <-lockTPCB(t, context.Background(), dsn, results, "run", "tpcb", "-c", "4", "-T", "2s", "--interval", "200ms",
			"--drain-timeout", tc.timeout, "--json", "--dsn", dsn, "--results", results)
		m := summaryJSON(t, r.stdout)
		d := drainOf(t, m)
		if num(t, m, "unfinished") != 4 || num(t, d, "cancelled") != 4 {
			t.Errorf("--drain-timeout %s: unfinished %v, drain %v: want 4 cancelled", tc.timeout, m["unfinished"], d)
		}
		if s := num(t, d, "drain_s"); s < tc.min || s > tc.max {
			t.Errorf("--drain-timeout %s: drain_s %v, want %v to %v", tc.timeout, s, tc.min, tc.max)
		}
		paths, _ := filepath.Glob(filepath.Join(results, "*", store.SpecFile))
		if len(paths) != 1 {
			t.Fatalf("spec files %v", paths)
		}
		b, err := os.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		var spec struct {
			Config map[string]any `json:"config"`
		}
		if err := json.Unmarshal(b, &spec); err != nil {
			t.Fatal(err)
		}
		want, _ := time.ParseDuration(tc.timeout)
		if got, ok := spec.Config["drain-timeout"].(float64); !ok || time.Duration(got) != want {
			t.Errorf("spec.json config drain-timeout %v, want %s", spec.Config["drain-timeout"], tc.timeout)
		}
	}
	results := t.TempDir()
	wantUsage(t, pgarena(t, nil, "run", "tpcb", "-T", "1s", "--drain-timeout", "-1s", "--dsn", dsn, "--results", results),
		"--drain-timeout must not be negative")
	noRuns(t, results)
}

// TestStepsAndGroupsCountUnfinished: each step of a sweep and each client
// group of a run with several counts its own transactions unfinished at
// the end of its measured time and what became of them in the drain, in
// --json and in the text summary's tables.
func TestStepsAndGroupsCountUnfinished(t *testing.T) {
	t.Parallel()
	t.Run("sweep", func(t *testing.T) {
		t.Parallel()
		dsn := pgtest.DSN(t)
		mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
		results := t.TempDir()
		// Locked in step 1 (2 clients stuck) until the run's end (4 in
		// step 2).
		r := <-lockTPCB(t, context.Background(), dsn, results, "run", "tpcb", "-c", "2,4", "-T", "2s", "--interval", "200ms",
			"--drain-timeout", "500ms", "--json", "--dsn", dsn, "--results", results)
		m := summaryJSON(t, r.stdout)
		steps, _ := m["steps"].([]any)
		if len(steps) != 2 {
			t.Fatalf("steps %v", m["steps"])
		}
		for i, want := range []float64{2, 4} {
			st, _ := steps[i].(map[string]any)
			if num(t, st, "unfinished") != want || num(t, drainOf(t, st), "cancelled") != want {
				t.Errorf("step %d: unfinished %v, drain %v: want %v cancelled", i+1, st["unfinished"], st["drain"], want)
			}
		}
		if num(t, m, "unfinished") != 6 {
			t.Errorf("unfinished %v, want 6 (both steps)", m["unfinished"])
		}
		if !regexp.MustCompile(`(?m)^\s+step\s.*\sfailed\s+unfinished\s+tps\s`).MatchString(r.stderr) ||
			!strings.Contains(r.stderr, "2 (2 cancelled)") || !strings.Contains(r.stderr, "4 (4 cancelled)") {
			t.Errorf("the steps table lacks the unfinished:\n%s", r.stderr)
		}
		// So does the CSV export, a row per step.
		x := mustRun(t, "export", "--results", results, "--format", "csv", str(t, m, "run_id"))
		recs, err := csv.NewReader(strings.NewReader(x.stdout)).ReadAll()
		if err != nil || len(recs) != 3 {
			t.Fatalf("export: %v, %d records\n%s", err, len(recs), x.stdout)
		}
		col := func(row int, name string) string { return recs[row][slices.Index(recs[0], name)] }
		for i, want := range []string{"2", "4"} {
			if col(i+1, "unfinished") != want || col(i+1, "cancelled") != want || col(i+1, "committed_in_drain") != "0" ||
				col(i+1, "failed_in_drain") != "0" || col(i+1, "drain_s") == "" {
				t.Errorf("CSV step %d: unfinished %q, drain_s %q, cancelled %q: want %s cancelled", i+1,
					col(i+1, "unfinished"), col(i+1, "drain_s"), col(i+1, "cancelled"), want)
			}
		}
		// compare, step by step, says so too.
		other := summaryJSON(t, mustRun(t, "run", "tpcb", "-c", "2,4", "-T", "1s", "--json", "--dsn", dsn, "--results", results).stdout)
		c := pgarena(t, nil, "compare", "--results", results, str(t, m, "run_id"), str(t, other, "run_id"))
		if !regexp.MustCompile(`(?m)^\s*unfinished\s+2 \(2 cancelled\)`).MatchString(c.stdout) ||
			!regexp.MustCompile(`(?m)^\s*unfinished\s+4 \(4 cancelled\)`).MatchString(c.stdout) {
			t.Errorf("compare does not count each step's unfinished:\n%s", c)
		}
	})
	t.Run("groups", func(t *testing.T) {
		t.Parallel()
		dsn := pgtest.DSN(t)
		mustRun(t, "init", "chbench", "-w", "1", "--load-workers", "2", "--dsn", dsn)
		// Until the clients are stuck before the run's end: -T as long as
		// a loaded host needs (its first interval can come late).
		var r result
		for length := 2 * time.Second; ; length *= 2 {
			results := t.TempDir()
			done, ok := lockTables(t, context.Background(), dsn, results,
				"warehouse, district, customer, history, new_order, orders, order_line, item, stock, supplier, nation, region", 3, true,
				"run", "chbench", "--oltp-clients", "2", "--olap-clients", "1", "-T", length.String(), "--interval", "200ms",
				"--drain-timeout", "500ms", "--json", "--dsn", dsn, "--results", results)
			r = <-done
			if ok {
				break
			}
			if length >= 16*time.Second {
				t.Fatalf("runs up to -T %s ended before their clients were stuck behind the locks\n%s", length, r)
			}
			t.Logf("the run of %s ended before its clients were stuck behind the locks; again, longer", length)
		}
		m := summaryJSON(t, r.stdout)
		groups, _ := m["groups"].([]any)
		got := map[string]float64{}
		for _, g := range groups {
			g, _ := g.(map[string]any)
			got[str(t, g, "name")] = num(t, g, "unfinished")
			if num(t, drainOf(t, g), "cancelled") != got[str(t, g, "name")] {
				t.Errorf("group %v: drain %v, want its unfinished cancelled", g["name"], g["drain"])
			}
		}
		if got["oltp"] != 2 || got["olap"] != 1 {
			t.Errorf("groups' unfinished %v, want oltp 2, olap 1", got)
		}
		if !regexp.MustCompile(`(?m)^\s+group\s.*\sfailed\s+unfinished\s+avg ms\s`).MatchString(r.stderr) ||
			!strings.Contains(r.stderr, "2 (2 cancelled)") || !strings.Contains(r.stderr, "1 (1 cancelled)") {
			t.Errorf("the groups table lacks the unfinished:\n%s", r.stderr)
		}
	})
}
