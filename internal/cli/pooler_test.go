package cli

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
)

// TestViaPoolers: a tiny tpcb run through each pooler pgarena starts, in
// front of a --dsn server: it completes, the pooler is recorded, its
// statistics are sampled and stored, and nothing of it is left behind.
func TestViaPoolers(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	for _, c := range []struct {
		via, pool, series string
	}{
		{"pgbouncer:transaction", "2", "pooler.cl_waiting"},
		{"pgbouncer:session", "4", "pooler.sv_active"},
		{"haproxy", "", "pooler.scur"},
		{"pgpool", "", "pooler.processes"},
	} {
		t.Run(c.via, func(t *testing.T) {
			results := t.TempDir()
			// Samples every 250 ms: a loaded host may serve the default
			// 1 s sampler once only in a 2 s run, and a rate takes two.
			args := []string{"run", "tpcb", "-c", "4", "-T", "2s", "--via", c.via, "--dsn", dsn, "--json", "--results", results,
				"--sample-interval", "250ms"}
			if c.pool != "" {
				args = append(args, "--pool-size", c.pool)
			}
			r := pgarena(t, nil, args...)
			if r.code != ExitOK {
				t.Fatalf("%s", r)
			}
			if sum := summaryJSON(t, r.stdout); num(t, sum, "transactions") <= 0 {
				t.Errorf("no transactions through %s", c.via)
			}
			run := loadLast(t, results)
			kind, _, _ := strings.Cut(c.via, ":")
			if run.Server == nil || run.Server.Pooler == nil || run.Server.Pooler.Kind != kind || run.Server.Pooler.Version == "" {
				t.Errorf("server.json pooler: %+v", run.Server)
			}
			if !strings.HasPrefix(run.Spec.Target, kind+" ") {
				t.Errorf("target %q does not name the pooler", run.Spec.Target)
			}
			if pts := run.Series(c.series); len(pts) == 0 {
				t.Errorf("no %s samples through %s", c.series, c.via)
			}
			if pts := run.Series("pg.xact_commit_per_s"); len(pts) == 0 {
				t.Errorf("the server itself was not sampled")
			}
			noPoolerLeft(t, r.stderr)
		})
	}
}

// TestViaEmbeddedQueues: the embedded cluster behind pgbouncer in
// transaction mode with more clients than the pool: clients wait in the
// pooler, the samples show it and a finding says so.
func TestViaEmbeddedQueues(t *testing.T) {
	t.Parallel()
	results := t.TempDir()
	r := pgarena(t, nil, "run", "tpcb", "-s", "1", "-c", "8", "-T", "3s", "--via", "pgbouncer:transaction",
		"--pool-size", "2", "--results", results, "--json")
	if r.code != ExitOK {
		t.Fatalf("%s", r)
	}
	run := loadLast(t, results)
	waiting := 0.0
	for _, p := range run.Series("pooler.cl_waiting") {
		waiting = max(waiting, p.Value)
	}
	if waiting <= 0 {
		t.Errorf("no client waiting in the pooler with 8 clients and a pool of 2: %v", run.Series("pooler.cl_waiting"))
	}
	found := false
	for _, f := range run.Findings {
		found = found || f.Kind == "pooler_queue" && strings.Contains(f.Message, "clients queued in the pooler")
	}
	if !found {
		t.Errorf("no pooler_queue finding: %+v", run.Findings)
	}
	if !strings.Contains(r.stderr, "findings:\n") || !strings.Contains(r.stderr, ": clients queued in the pooler for about ") {
		t.Errorf("the text summary does not show the pooler queue:\n%s", r.stderr)
	}
	if run.Server.Pooler.PoolSize != 2 || run.Server.Pooler.Settings["pool_mode"] != "transaction" {
		t.Errorf("pooler record %+v", run.Server.Pooler)
	}
	noPoolerLeft(t, r.stderr)
}

// TestViaPreparedRefused: -M prepared through pgbouncer's transaction
// pooling is bad input found before anything runs or is recorded.
func TestViaPreparedRefused(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	for _, mode := range []string{"transaction", "statement"} {
		r := pgarena(t, nil, "run", "tpcb", "-M", "prepared", "--via", "pgbouncer:"+mode, "--dsn", dsn, "--results", results)
		wantUsage(t, r, "-M prepared", "pgbouncer in "+mode+" mode", "-M simple", "max_prepared_statements")
	}
	noRuns(t, results)
}

// TestViaBadInput: pooler flags that do not fit are one line, exit 2.
func TestViaBadInput(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--via", "nginx"}, `unknown pooler "nginx"`},
		{[]string{"--via", "pgbouncer:sideways"}, `no mode "sideways"`},
		{[]string{"--pool-size", "4"}, "give --via too"},
		{[]string{"--via", "pgbouncer", "--pool-size", "-1"}, "at least 1"},
		{[]string{"--via", "haproxy", "--pooler-admin-dsn", "dbname=pgbouncer"}, "not both"},
	} {
		r := pgarena(t, nil, append([]string{"run", "tpcb", "--dsn", dsn, "--results", results}, c.args...)...)
		wantUsage(t, r, c.want)
	}
	r := pgarena(t, nil, "run", "tpcb", "--pooler-admin-dsn", "dbname=pgbouncer", "--results", results)
	wantUsage(t, r, "give --dsn too")
	noRuns(t, results)
}

// TestPoolerAdminDSN: a pgbouncer the user runs, named by --dsn, with its
// admin console given: SHOW POOLS and SHOW STATS are sampled.
func TestPoolerAdminDSN(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	conn := connect(t, dsn)
	db := conn.Config().Database
	b := pgtest.StartBouncer(t, pgtest.Cluster(t), db, "transaction", 2)
	admin := b.AdminDSN()
	results := t.TempDir()
	r := pgarena(t, nil, "run", "tpcb", "-c", "6", "-T", "2s", "--dsn", b.DSN(), "--pooler-admin-dsn", admin, "--results", results)
	if r.code != ExitOK {
		t.Fatalf("%s", r)
	}
	run := loadLast(t, results)
	if len(run.Series("pooler.cl_active")) == 0 || len(run.Series("pooler.xact_per_s")) == 0 {
		t.Errorf("the external pgbouncer's console was not sampled: %v", run.SeriesNames())
	}
	if run.Server.Pooler == nil || run.Server.Pooler.Kind != "console" {
		t.Errorf("pooler record %+v", run.Server.Pooler)
	}
	// Its pool mode is not known before the run: -M prepared fails at run
	// time, and a finding says why and what to do. Whether a client meets a
	// server connection that lacks its statements depends on pgbouncer's
	// choice of server; replacing the server connections every 100 ms
	// makes some certainly do.
	replaceServersOften(t, admin)
	prep := pgarena(t, nil, "run", "tpcb", "-M", "prepared", "-c", "4", "-T", "2s", "--dsn", b.DSN(),
		"--pooler-admin-dsn", admin, "--results", results)
	if prep.code != ExitOK && prep.code != ExitFailed {
		t.Fatalf("%s", prep)
	}
	found := false
	for _, f := range loadLast(t, results).Findings {
		found = found || f.Kind == "prepared_statements" && strings.Contains(f.Message, "through a pooler") &&
			strings.Contains(f.Message, "-M simple")
	}
	if !found || !strings.Contains(prep.stderr, "critical: ") {
		t.Errorf("no prepared_statements finding:\n%s", prep)
	}
	bad := pgarena(t, nil, "run", "tpcb", "-c", "1", "-T", "1s", "--dsn", b.DSN(), "--pooler-admin-dsn",
		strings.Replace(admin, "dbname=pgbouncer", "dbname=nosuchdb", 1), "--results", t.TempDir())
	if bad.code == ExitOK || !strings.Contains(bad.stderr, "admin console does not answer") {
		t.Errorf("a wrong --pooler-admin-dsn should fail clearly:\n%s", bad)
	}
}

// replaceServersOften makes a pgbouncer close each server connection
// when it is released 100 ms or more after it was opened (SET
// server_lifetime on its console), so clients keep meeting fresh server
// connections, without their prepared statements. Not RECONNECT: it also
// closes a server connection that is still logging in, which pgbouncer
// (objects.c disconnect_server, 1.18 to 1.25) counts as a failed login;
// it then refuses new clients ("server login has been failing") and opens
// no server connection for server_login_retry (15 s). On a loaded host a
// login takes long enough to be hit often.
func replaceServersOften(t *testing.T, admin string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgbouncer console: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "SET server_lifetime = '0.1'"); err != nil {
		t.Fatalf("pgbouncer console: SET server_lifetime: %v", err)
	}
}

func loadLast(t *testing.T, results string) *store.Run {
	t.Helper()
	st, err := store.Open(results)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.Load("last")
	if err != nil {
		t.Fatal(err)
	}
	return run
}

var startedRE = regexp.MustCompile(`note: started \S+ .* on (/\S+)`)

// noPoolerLeft checks that the pooler's directory is gone and no process
// still works in it.
func noPoolerLeft(t *testing.T, stderr string) {
	t.Helper()
	m := startedRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Errorf("no 'started' note in:\n%s", stderr)
		return
	}
	dir := m[1]
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("pooler directory %s left behind (%v)", dir, err)
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if cwd, err := os.Readlink("/proc/" + p.Name() + "/cwd"); err == nil && strings.HasPrefix(cwd, dir) {
			t.Errorf("process %s still runs in %s", p.Name(), cwd)
		}
	}
}
