package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// failureText finds, in a --json summary, the first and last failure of
// class of transaction type tx.
func failureText(t *testing.T, sum map[string]any, tx, class string) (first, last map[string]any) {
	t.Helper()
	types, _ := sum["tx"].([]any)
	for _, x := range types {
		m, _ := x.(map[string]any)
		if m["name"] != tx {
			continue
		}
		exs, _ := m["error_examples"].([]any)
		for _, e := range exs {
			em, _ := e.(map[string]any)
			if em["class"] == class {
				first, _ = em["first"].(map[string]any)
				last, _ = em["last"].(map[string]any)
				return first, last
			}
		}
	}
	t.Fatalf("the --json summary has no error_examples of class %s for %s: %v", class, tx, sum["tx"])
	return nil, nil
}

// TestRenamedTableFailuresKeepTheirText: a table renamed for 2 s mid-run
// makes transactions fail; the summary (text and --json) names the
// SQLSTATE and the server's message, and the intervals keep them.
func TestRenamedTableFailuresKeepTheirText(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	done := make(chan result, 1)
	go func() {
		done <- pgarena(t, nil, "run", "tpcb", "-c", "2", "-T", "5s", "--interval", "200ms",
			"--dsn", dsn, "--json", "--results", results)
	}()
	waitIntervals(t, results, 5, 60*time.Second)
	conn := connect(t, dsn)
	exec(t, conn, "SET lock_timeout = '10s'")
	exec(t, conn, "ALTER TABLE pgbench_history RENAME TO pgbench_history_away")
	time.Sleep(2 * time.Second)
	exec(t, conn, "ALTER TABLE pgbench_history_away RENAME TO pgbench_history")

	var r result
	select {
	case r = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("the run did not end")
	}
	if r.code != ExitOK && r.code != ExitFailed {
		t.Fatalf("exit code %d\n%s", r.code, r)
	}
	t.Logf("table renamed for 2 s:\n%s", r.stderr)
	sum := summaryJSON(t, r.stdout)
	errs, _ := sum["errors"].(map[string]any)
	if n, _ := errs["other"].(float64); n <= 0 {
		t.Fatalf("no failures of class other while the table was away: %v\n%s", errs, r)
	}
	first, last := failureText(t, sum, "tpcb-like", "other")
	const msg = `relation "pgbench_history" does not exist`
	for _, d := range []map[string]any{first, last} {
		if d["sqlstate"] != "42P01" || d["message"] != msg || d["severity"] != "ERROR" {
			t.Errorf("failure text %v, want SQLSTATE 42P01 and %q", d, msg)
		}
	}
	for _, want := range []string{"failed by class: other", "ERROR 42P01: " + msg} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the text summary lacks %q:\n%s", want, r.stderr)
		}
	}
	// The run's intervals keep the text too: show reads it back.
	sj := mustRun(t, "show", "last", "--json", "--results", results)
	f2, _ := failureText(t, summaryJSON(t, sj.stdout), "tpcb-like", "other")
	if f2["sqlstate"] != "42P01" || f2["message"] != msg {
		t.Errorf("show last --json: failure text %v", f2)
	}
}

// TestPgbouncerTransactionModePrepared: through a real pgbouncer in
// transaction mode, -M prepared fails (the pooler does not keep a
// session's prepared statements); the failures are class
// prepared_statements with their SQLSTATE and message, and the summary
// says what to do.
func TestPgbouncerTransactionModePrepared(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	conn := connect(t, dsn)
	var db string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := conn.QueryRow(ctx, "select current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	b := pgtest.StartBouncer(t, pgtest.Cluster(t), db, "transaction", 2)

	// Once both server connections hold every statement, no transaction
	// fails: whether one meets a server connection that lacks them depends
	// on pgbouncer's choice of server (under CI load none did). Replacing
	// the server connections every 100 ms makes some clients certainly do
	// (as in TestPoolerAdminDSN).
	replaceServersOften(t, b.AdminDSN())
	r := pgarena(t, nil, "run", "tpcb", "-M", "prepared", "-c", "4", "-T", "3s",
		"--dsn", b.DSN(), "--json", "--results", t.TempDir())
	if r.code != ExitOK && r.code != ExitFailed {
		t.Fatalf("exit code %d\n%s", r.code, r)
	}
	t.Logf("through pgbouncer:\n%s", r.stderr)
	sum := summaryJSON(t, r.stdout)
	errs, _ := sum["errors"].(map[string]any)
	if n, _ := errs["prepared_statements"].(float64); n <= 0 {
		t.Fatalf("no prepared_statements failures through pgbouncer in transaction mode: %v\n%s", errs, r)
	}
	first, _ := failureText(t, sum, "tpcb-like", "prepared_statements")
	code, _ := first["sqlstate"].(string)
	msg, _ := first["message"].(string)
	if (code != "26000" && code != "42P05") || !strings.Contains(msg, "prepared statement") {
		t.Errorf("first failure %v: want SQLSTATE 26000 or 42P05 about a prepared statement", first)
	}
	advice, _ := sum["error_advice"].(map[string]any)
	if a, _ := advice["prepared_statements"].(string); !strings.Contains(a, "-M simple") || !strings.Contains(a, "max_prepared_statements") {
		t.Errorf("error_advice %v does not say what to do", sum["error_advice"])
	}
	for _, want := range []string{"failed by class: prepared_statements", code + ": " + msg,
		"what to do about prepared_statements: ", "-M simple or -M extended", "max_prepared_statements"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the text summary lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Count(r.stderr, "what to do about prepared_statements") != 1 {
		t.Errorf("the advice should be printed once:\n%s", r.stderr)
	}
}
