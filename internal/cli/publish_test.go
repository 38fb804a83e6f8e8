package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestOutPostgresAndPublish writes a run live into a results database,
// publishes it there again (nothing changes) and into a second database
// twice (the same rows as live; the second publish changes nothing).
func TestOutPostgresAndPublish(t *testing.T) {
	t.Parallel()
	dsn, other := pgtest.DSN(t), pgtest.DSN(t)
	results := t.TempDir()
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	r := mustRun(t, "run", "tpcb", "-S", "-c", "2", "-T", "2s", "--interval", "500ms", "--dsn", dsn,
		"--results", results, "--json", "--out", "postgres="+dsn)
	id := str(t, summaryJSON(t, r.stdout), "run_id")
	lines := func(f string) int {
		b, err := os.ReadFile(filepath.Join(results, id, f))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	ctx := context.Background()
	live := pgtest.Connect(t, dsn, pgx.QueryExecModeExec)
	state := func(c *pgx.Conn) (status string, intervals, samples int, sum, digest string) {
		t.Helper()
		err := c.QueryRow(ctx, `SELECT r.status,
			(SELECT count(*) FROM pgarena_results.intervals WHERE run = r.id),
			(SELECT count(*) FROM pgarena_results.samples WHERE run = r.id),
			r.summary::text,
			(SELECT md5(string_agg(data::text, '' ORDER BY seq)) FROM pgarena_results.intervals WHERE run = r.id)
			FROM pgarena_results.runs r WHERE r.run_id = $1`, id).Scan(&status, &intervals, &samples, &sum, &digest)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	st, ivs, sms, sum, dig := state(live)
	if st != "complete" || ivs != lines("intervals.jsonl") || sms != lines("samples.jsonl") || sum == "" {
		t.Fatalf("live: status %s, %d intervals, %d samples (run directory: %d, %d)", st, ivs, sms,
			lines("intervals.jsonl"), lines("samples.jsonl"))
	}
	var tps float64
	if err := live.QueryRow(ctx, `SELECT tps FROM pgarena_results.run_headlines WHERE run_id = $1`, id).Scan(&tps); err != nil || tps <= 0 {
		t.Errorf("run_headlines: tps %v, %v", tps, err)
	}
	var committed int64
	if err := live.QueryRow(ctx, `SELECT sum(committed) FROM pgarena_results.interval_tx WHERE run_id = $1`, id).Scan(&committed); err != nil || committed <= 0 {
		t.Errorf("interval_tx: %d committed, %v", committed, err)
	}

	for _, c := range [][]string{{"show", id}, {"show", "--json", id}, {"export", "--format", "json", id}} {
		fromDir := mustRun(t, append(c, "--results", results)...)
		if fromDB := mustRun(t, append(c, "--results", resultsURL(t, dsn))...); fromDB.stdout != fromDir.stdout {
			t.Errorf("%s of the run written live: %s", c, firstDiff(fromDir.stdout, fromDB.stdout))
		}
	}
	if p := mustRun(t, "publish", id, "--to", dsn, "--results", results); !strings.Contains(p.stdout, id+": already published") {
		t.Errorf("publishing a run written live:\n%s", p)
	}
	if p := mustRun(t, "publish", "--all", "--to", other, "--results", results); !strings.Contains(p.stdout, "published "+id) {
		t.Errorf("first publish:\n%s", p)
	}
	pub := pgtest.Connect(t, other, pgx.QueryExecModeExec)
	var xmin string
	if err := pub.QueryRow(ctx, `SELECT xmin::text FROM pgarena_results.runs WHERE run_id = $1`, id).Scan(&xmin); err != nil {
		t.Fatal(err)
	}
	if p := mustRun(t, "publish", "last", "--to", other, "--results", results); !strings.Contains(p.stdout, id+": already published") {
		t.Errorf("second publish:\n%s", p)
	}
	pst, pivs, psms, psum, pdig := state(pub)
	if pst != st || pivs != ivs || psms != sms || psum != sum || pdig != dig {
		t.Errorf("published: %s %d %d %s; live: %s %d %d %s; summaries equal %v", pst, pivs, psms, pdig, st, ivs, sms, dig, psum == sum)
	}
	var xmin2 string
	if err := pub.QueryRow(ctx, `SELECT xmin::text FROM pgarena_results.runs WHERE run_id = $1`, id).Scan(&xmin2); err != nil || xmin2 != xmin {
		t.Errorf("the second publish rewrote the run (xmin %s, then %s; %v)", xmin, xmin2, err)
	}
}

// TestOutPostgresStopped: a run stopped by an interrupt while writing live
// is in the results database as in its directory: stopped, with its
// summary (a run whose output closes without an end is "interrupted").
func TestOutPostgresStopped(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		done <- pgarenaCtx(t, ctx, nil, "run", "tpcb", "-S", "-c", "1", "-T", "90s", "--dsn", dsn,
			"--results", t.TempDir(), "--out", "postgres="+dsn)
	}()
	c := pgtest.Connect(t, dsn, pgx.QueryExecModeExec)
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; n == 0; {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no interval in the results database within 60 s:\n%s", <-done)
		}
		// the schema may not exist yet: an error counts as none
		_ = c.QueryRow(ctx, `SELECT count(*) FROM pgarena_results.intervals`).Scan(&n)
		select {
		case r := <-done:
			t.Fatalf("the run ended first:\n%s", r)
		case <-time.After(100 * time.Millisecond):
		}
	}
	cancel()
	if r := <-done; r.code != ExitInterrupted {
		t.Errorf("want exit %d:\n%s", ExitInterrupted, r)
	}
	var status string
	var tps float64
	err := c.QueryRow(context.Background(), `SELECT status, tps FROM pgarena_results.run_headlines`).Scan(&status, &tps)
	if err != nil || status != "stopped" || tps <= 0 {
		t.Errorf("status %q, tps %v (%v): want stopped with its summary", status, tps, err)
	}
}

// TestOutPostgresForeignSchema: a pgarena_results schema pgarena did not
// create is refused (bad input), and left as it was.
func TestOutPostgresForeignSchema(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	c := pgtest.Connect(t, dsn, pgx.QueryExecModeExec)
	if _, err := c.Exec(context.Background(), `CREATE SCHEMA pgarena_results; CREATE TABLE pgarena_results.mine (x int)`); err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	wantUsage(t, pgarena(t, nil, "run", "tpcb", "-T", "1s", "--dsn", dsn, "--results", results, "--out", "postgres="+dsn),
		"schema pgarena_results exists and was not created by pgarena")
	noRuns(t, results)
	var n int
	if err := c.QueryRow(context.Background(), `SELECT count(*) FROM pg_tables WHERE schemaname = 'pgarena_results'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the foreign schema has %d tables (%v), want its 1", n, err)
	}
}
