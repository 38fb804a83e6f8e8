package cli

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target/local"
)

// smallServer starts a cluster of its own with max_connections=20 (17 for
// clients after the reserved ones), for tests that must fill it.
func smallServer(t *testing.T) *local.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := local.Start(ctx, local.Options{Settings: map[string]string{"max_connections": "20", "fsync": "off"}})
	if err != nil {
		if os.Getenv(pgtest.RequireEnv) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() { _ = c.Remove() })
	return c
}

// rejections counts the server's "too many clients" refusals in its log.
func rejections(t *testing.T, c *local.Cluster) int {
	t.Helper()
	b, err := os.ReadFile(c.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "sorry, too many clients already")
}

// TestTooManyClients: 60 clients against a server that takes 17 fail in
// one line with exit 1, after one attempt each (no retry storm); with
// --proceed-with-connected the run completes on those that connected and
// says so.
func TestTooManyClients(t *testing.T) {
	c := smallServer(t)
	dsn := c.DSN("postgres")
	results := t.TempDir()
	mustRun(t, "init", "tpcb", "--dsn", dsn, "--load-workers", "2")

	r := pgarena(t, nil, "run", "tpcb", "-S", "-c", "60", "-T", "3s", "--dsn", dsn, "--results", results, "--sample-interval", "0")
	t.Logf("%s", r)
	if r.code != ExitFailed {
		t.Fatalf("exit %d, want %d", r.code, ExitFailed)
	}
	last := lastLine(r.stderr)
	for _, want := range []string{"the server accepts", "of 60 clients could not connect: too_many_connections", "--proceed-with-connected"} {
		if !strings.Contains(last, want) {
			t.Errorf("last line %q lacks %q", last, want)
		}
	}
	if n := rejections(t, c); n == 0 || n > 60 {
		t.Errorf("the server refused %d connection attempts: want one per refused client at most (no storm)", n)
	}
	before := rejections(t, c)

	r = pgarena(t, nil, "run", "tpcb", "-S", "-c", "60", "-T", "3s", "--dsn", dsn, "--results", results,
		"--sample-interval", "0", "--proceed-with-connected", "--json")
	if r.code != 0 {
		t.Fatalf("with --proceed-with-connected:\n%s", r)
	}
	var sum metrics.Summary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.NotConnected < 40 || sum.NotConnected > 50 || sum.Transactions == 0 || sum.Failed != 0 {
		t.Errorf("not connected %d, transactions %d, failed %d: want ~43 sitting out, the rest running cleanly",
			sum.NotConnected, sum.Transactions, sum.Failed)
	}
	if !strings.Contains(r.stderr, "could not connect (the server refused them) and sat the run out") ||
		!strings.Contains(r.stderr, "going on with the") {
		t.Errorf("the run does not say it went on with fewer clients:\n%s", r.stderr)
	}
	if n := rejections(t, c) - before; n > 60 {
		t.Errorf("%d refusals during a run that went on: clients that sat out must not retry", n)
	}
}

// TestDegradedRun: a run where a table vanishes for a while fails more
// than 10% of its transactions: status degraded, exit 1.
func TestDegradedRun(t *testing.T) {
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	mustRun(t, "init", "tpcb", "--dsn", dsn, "--load-workers", "2")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	done := make(chan result, 1)
	go func() {
		done <- pgarena(t, nil, "run", "tpcb", "-c", "2", "-T", "3s", "--dsn", dsn, "--results", results, "--json")
	}()
	waitIntervals(t, results, 1, 60*time.Second) // measuring
	if _, err := conn.Exec(ctx, "alter table pgbench_tellers rename to pgbench_tellers_away"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if _, err := conn.Exec(ctx, "alter table pgbench_tellers_away rename to pgbench_tellers"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != ExitFailed || !strings.Contains(lastLine(r.stderr), "run degraded") {
		t.Fatalf("want exit 1 and a degraded run:\n%s", r)
	}
	var sum metrics.Summary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Status != metrics.StatusDegraded || sum.FailedShare() <= 0.10 {
		t.Errorf("status %s with %.1f%% failed: want degraded above 10%%", sum.Status, 100*sum.FailedShare())
	}
	// Raising the allowance makes the same kind of run complete.
	r = pgarena(t, nil, "run", "tpcb", "-c", "2", "-T", "1s", "--dsn", dsn, "--results", results, "--max-error-rate", "100")
	if r.code != 0 {
		t.Errorf("a clean run with --max-error-rate 100:\n%s", r)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
