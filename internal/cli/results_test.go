package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/output/postgres"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/serve"
	"github.com/pgarena/pgarena/internal/store"
)

// resultsURL is dsn (key=value, as pgtest gives) as the postgres:// URL
// --results takes.
func resultsURL(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"host": {cfg.Host}, "port": {strconv.Itoa(int(cfg.Port))}, "sslmode": {"disable"}}
	return "postgres://" + url.User(cfg.User).String() + "@/" + url.PathEscape(cfg.Database) + "?" + q.Encode()
}

// twoCells is a plan of two short tpcb cells, samples included.
const twoCells = `name: two
targets:
  - name: db
    dsn: ${PLAN_TEST_DSN}
    init: once
defaults:
  time: 2s
  flags:
    interval: 500ms
    progress: 0
    sample-interval: 500ms
workloads:
  - name: tpcb
    flags:
      scale: 1
      select-only: true
matrix:
  clients: [1, 2]
`

// TestReadersSameFromDatabase: runs published into a results database read
// back byte for byte as from their directory in every read command: list,
// show (text and JSON), compare, report, export (CSV and JSON), plan status,
// report and export, and serve's pages. The runs are the report fixtures
// (sweeps, an interrupted run, labels, two hosts) and a plan's two real
// runs (server, samples, findings, histograms.hlog).
func TestReadersSameFromDatabase(t *testing.T) {
	t.Parallel()
	dsn, resdb := pgtest.DSN(t), pgtest.DSN(t)
	dir := t.TempDir()
	results, file := filepath.Join(dir, "results"), filepath.Join(dir, "two.yaml")
	if _, err := reporttest.Write(results, append(reporttest.Standard(), reporttest.Sweep())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(twoCells), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(cleanEnv(), "PLAN_TEST_DSN="+dsn)
	if r := pgarena(t, env, "plan", "run", file, "--results", results); r.code != 0 {
		t.Fatalf("plan run:\n%s", r)
	}
	mustRun(t, "publish", "--all", "--to", resdb, "--results", results)
	db := resultsURL(t, resdb)
	var samples, findings, hlogs int
	if err := pgtest.Connect(t, resdb, pgx.QueryExecModeExec).QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM pgarena_results.samples), (SELECT count(*) FROM pgarena_results.findings),
		(SELECT count(histograms) FROM pgarena_results.runs)`).Scan(&samples, &findings, &hlogs); err != nil || samples == 0 || hlogs == 0 {
		t.Errorf("published %d samples, %d findings, %d histogram logs (%v): want samples and logs", samples, findings, hlogs, err)
	}

	src, err := postgres.OpenResults(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	where := src.Where()
	infos, err := store.OpenReadOnly(results).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 12 {
		t.Fatalf("%d runs in the directory, want 12", len(infos))
	}
	a, b := infos[len(infos)-1].ID, infos[len(infos)-2].ID // the two oldest: pool-a
	cmds := [][]string{
		{"list"},
		{"compare", a, b},
		{"compare", "--group-by", "label", "--metric", "p95", "label~pool-*"},
		{"report", "-o", "-", "last"},
		{"report", "-o", "-", a, b, "last~1"},
		{"export", "--format", "csv"},
		{"export", "--format", "json"},
		{"plan", "status", file},
		{"plan", "status", "--json", file},
		{"plan", "export", "--format", "csv", file},
		{"plan", "export", "--format", "json", file},
		{"show", "nosuchrun"},
	}
	for _, ri := range infos {
		cmds = append(cmds, []string{"show", ri.ID}, []string{"show", "--json", ri.ID})
	}
	for _, c := range cmds {
		fromDir := pgarena(t, env, append(c, "--results", results)...)
		fromDB := pgarena(t, env, append(c, "--results", db)...)
		fromDB.stderr = strings.ReplaceAll(fromDB.stderr, where, results)
		if (fromDir.code != 0 || fromDir.stdout == "") && c[1] != "nosuchrun" {
			t.Errorf("pgarena %s read nothing from the directory:\n%s", strings.Join(c, " "), fromDir)
		}
		if fromDir.code != fromDB.code || fromDir.stdout != fromDB.stdout || fromDir.stderr != fromDB.stderr {
			t.Errorf("pgarena %s: the database reads differently from the directory\n%s\n%s",
				strings.Join(c, " "), firstDiff(fromDir.String(), fromDB.String()), fromDB)
		}
	}
	reportDir, reportDB := filepath.Join(dir, "dir.html"), filepath.Join(dir, "db.html")
	mustRun(t, "plan", "report", file, "--results", results, "-o", reportDir)
	mustRun(t, "plan", "report", file, "--results", db, "-o", reportDB)
	if x, y := readFile(t, reportDir), readFile(t, reportDB); x != y {
		t.Errorf("plan report: %s", firstDiff(x, y))
	}

	pages := []string{"/", "/run/" + a, "/run/" + infos[0].ID, "/compare?run=" + a + "&run=" + b,
		"/download/csv?run=" + a, "/download/json?run=" + infos[0].ID, "/plan/two", "/run/nosuchrun"}
	dirSrv := httptest.NewServer(serve.New(store.OpenReadOnly(results), serve.Options{}))
	defer dirSrv.Close()
	dbSrv := httptest.NewServer(serve.New(src, serve.Options{}))
	defer dbSrv.Close()
	for _, p := range pages {
		x, y := get(t, dirSrv.URL+p), get(t, dbSrv.URL+p)
		y = strings.ReplaceAll(y, where, results)
		if x != y {
			t.Errorf("serve %s: %s", p, firstDiff(x, y))
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// get fetches url (through localhost, as serve wants without a token) and
// returns its status line and body.
func get(t *testing.T, u string) string {
	t.Helper()
	u = strings.Replace(u, "127.0.0.1", "localhost", 1)
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status + "\n" + string(b)
}

// firstDiff shows where x and y first differ.
func firstDiff(x, y string) string {
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	from := max(0, i-200)
	return "first difference at byte " + strconv.Itoa(i) + ":\n--- directory ---\n" + x[from:min(len(x), i+200)] +
		"\n--- database ---\n" + y[from:min(len(y), i+200)]
}

// TestPublishConcurrently: two machines publish at once into one results
// database, each its own runs and both the same runs: every run is there
// once, whole.
func TestPublishConcurrently(t *testing.T) {
	t.Parallel()
	resdb := pgtest.DSN(t)
	one, two := t.TempDir(), t.TempDir()
	fx := reporttest.Standard()
	ids, err := reporttest.Write(one, fx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[4:] { // the second machine's runs
		if err := os.Rename(filepath.Join(one, id), filepath.Join(two, id)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, d := range []string{one, two, one, two} {
		wg.Go(func() {
			if r := pgarena(t, nil, "publish", "--all", "--to", resdb, "--results", d); r.code != 0 {
				t.Errorf("publish %s:\n%s", d, r)
			}
		})
	}
	wg.Wait()
	c := pgtest.Connect(t, resdb, pgx.QueryExecModeExec)
	var runs, intervals, want int
	if err := c.QueryRow(context.Background(), `SELECT count(*), (SELECT count(*) FROM pgarena_results.intervals) FROM pgarena_results.runs`).Scan(&runs, &intervals); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{one, two} {
		infos, err := store.OpenReadOnly(d).List()
		if err != nil {
			t.Fatal(err)
		}
		for _, ri := range infos {
			r, err := store.OpenReadOnly(d).Load(ri.ID)
			if err != nil {
				t.Fatal(err)
			}
			want += len(r.Intervals)
		}
	}
	if runs != len(fx) || intervals != want {
		t.Errorf("%d runs with %d intervals in the database, want %d with %d", runs, intervals, len(fx), want)
	}
}

// TestResultsURLKeepsItsPassword: a results database that cannot be
// reached, or --results URL given to a command that records runs, is one
// line without the URL's password.
func TestResultsURLKeepsItsPassword(t *testing.T) {
	t.Parallel()
	u := "postgres://bench:s3cr3tpw@127.0.0.1:1/results?connect_timeout=5"
	for _, args := range [][]string{
		{"list", "--results", u},
		{"show", "last", "--results", u},
		{"export", "--results", u},
		{"run", "tpcb", "-T", "1s", "--dsn", "postgres://127.0.0.1:1/x", "--results", u},
		{"list", "--results", "postgres://bench:s3cr3tpw@127.0.0.1:1/results?sslmode=bogus"},
	} {
		r := pgarena(t, nil, args...)
		if r.code != ExitUsage || strings.Contains(r.stdout+r.stderr, "s3cr3tpw") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("pgarena %s: want exit 2, one line and no password:\n%s", strings.Join(args, " "), r)
		}
	}
}

// TestOutPostgresFailedRun: a run that fails after it was recorded is in
// the results database as in its directory: failed, with its error (the
// SQLSTATE in runs_overview). One fails initialising (its role may not
// create tables: 42501), one when its clients are refused (the role's
// connection limit: 53300).
func TestOutPostgresFailedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, resdb := pgtest.DSN(t), pgtest.DSN(t)
	results := t.TempDir()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c := pgtest.Connect(t, dsn, pgx.QueryExecModeExec)
	owner, guest := "owner_"+cfg.Database, "guest_"+cfg.Database
	for _, q := range []string{"CREATE ROLE " + owner + " LOGIN", "CREATE ROLE " + guest + " LOGIN",
		"ALTER DATABASE " + cfg.Database + " OWNER TO " + owner} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = c.Exec(ctx, "ALTER DATABASE "+cfg.Database+" OWNER TO "+cfg.User)
		_, _ = c.Exec(ctx, "DROP OWNED BY "+owner+", "+guest)
		_, _ = c.Exec(ctx, "DROP ROLE "+owner+", "+guest)
	})
	as := func(role string) string { return strings.Replace(dsn, "user="+cfg.User, "user="+role, 1) }
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", as(owner))
	if _, err := c.Exec(ctx, "ALTER ROLE "+owner+" CONNECTION LIMIT 3"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args     []string
		sqlstate string
	}{
		{[]string{"--dsn", as(guest), "--init", "-s", "1"}, "42501"},
		{[]string{"--dsn", as(owner), "-c", "8"}, "53300"},
	} {
		args := append([]string{"run", "tpcb", "-S", "-T", "2s", "--sample-interval", "0", "--results", results,
			"--out", "postgres=" + resdb}, tc.args...)
		r := pgarena(t, nil, args...)
		if r.code != ExitFailed {
			t.Fatalf("pgarena %s: want exit %d\n%s", strings.Join(args, " "), ExitFailed, r)
		}
		fromDir := mustRun(t, "show", "--json", "last", "--results", results)
		var id, status, reason, sqlstate string
		err := pgtest.Connect(t, resdb, pgx.QueryExecModeExec).QueryRow(ctx, `SELECT run_id, status, stop_reason, coalesce(sqlstate, '')
			FROM pgarena_results.runs_overview ORDER BY id DESC LIMIT 1`).Scan(&id, &status, &reason, &sqlstate)
		if err != nil || status != "failed" || sqlstate != tc.sqlstate || !strings.Contains(fromDir.stdout, id) {
			t.Errorf("%s: the results database has run %s %s (%s), SQLSTATE %q (%v); want the run failed with %s:\n%s",
				tc.args, id, status, reason, sqlstate, err, tc.sqlstate, fromDir.stdout)
		}
		if fromDB := mustRun(t, "show", "--json", id, "--results", resultsURL(t, resdb)); fromDB.stdout != fromDir.stdout {
			t.Errorf("%s: show --json differs: %s", tc.args, firstDiff(fromDir.stdout, fromDB.stdout))
		}
	}
}

// TestOutPostgresKilled: a run written live whose pgarena is killed with
// SIGKILL reads as running from the results database while it goes and as
// interrupted once its writer is gone, as from its directory.
func TestOutPostgresKilled(t *testing.T) {
	t.Parallel()
	dsn, resdb := pgtest.DSN(t), pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results, db := t.TempDir(), resultsURL(t, resdb)
	cmd := osexec.Command(os.Args[0], "run", "tpcb", "-S", "-c", "1", "-T", "90s", "--dsn", dsn,
		"--results", results, "--interval", "200ms", "--out", "postgres="+resdb)
	cmd.Env = append(cleanEnv(), cliMainEnv+"=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	status := func(results string) string {
		t.Helper()
		r := pgarena(t, nil, "show", "--json", "last", "--results", results)
		if r.code != 0 {
			return ""
		}
		return str(t, summaryJSON(t, r.stdout), "status")
	}
	c := pgtest.Connect(t, resdb, pgx.QueryExecModeExec)
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; n < 3; {
		if time.Now().After(deadline) {
			t.Fatal("no 3 intervals in the results database within 60 s")
		}
		_ = c.QueryRow(context.Background(), `SELECT count(*) FROM pgarena_results.intervals`).Scan(&n) // no schema yet: none
		time.Sleep(50 * time.Millisecond)
	}
	if s := status(db); s != "running" {
		t.Errorf("while it runs the results database says %q, want running", s)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waited = true
	deadline = time.Now().Add(30 * time.Second) // the server sees the socket closed at once
	for status(db) != "interrupted" {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the kill the results database says %q, want interrupted", status(db))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := status(results); s != "interrupted" {
		t.Errorf("the run's directory says %q", s)
	}
}
