package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/workload"
)

// TestEndToEnd initialises tpcb, runs it under each protocol and script,
// checks consistency after each run, and reads the runs back.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()

	r := mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	for _, want := range []string{"create tables...", "vacuum analyze...", "init tpcb done: 100011 rows"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("init progress does not show %q:\n%s", want, r.stderr)
		}
	}

	var ids []string // in the order run
	// check runs after each run; simple-update (-N) leaves tellers and
	// branches behind by design, so after it check must fail saying so.
	checkFails := false
	run := func(name string, extra ...string) map[string]any {
		t.Helper()
		args := append([]string{"run", "tpcb", "-c", "2", "--dsn", dsn, "--json", "--results", results}, extra...)
		r := mustRun(t, args...)
		m := summaryJSON(t, r.stdout)
		if !strings.Contains(r.stderr, "tps = ") {
			t.Errorf("%s: with --json the text summary should go to stderr:\n%s", name, r.stderr)
		}
		for _, k := range []string{"failed", "retries", "duration_s", "transactions", "tps"} {
			num(t, m, k)
		}
		if got := num(t, m, "clients"); got != 2 {
			t.Errorf("%s: clients = %v, want 2", name, got)
		}
		if num(t, m, "tps") <= 0 || num(t, m, "transactions") <= 0 {
			t.Errorf("%s: tps %v, transactions %v: want both > 0", name, m["tps"], m["transactions"])
		}
		if num(t, m, "failed") != 0 {
			t.Errorf("%s: %v failed transactions (errors %v)", name, m["failed"], m["errors"])
		}
		if num(t, m, "duration_s") <= 0 {
			t.Errorf("%s: duration_s = %v", name, m["duration_s"])
		}
		lat, ok := m["latency_ms"].(map[string]any)
		if !ok {
			t.Fatalf("%s: no latency_ms object: %v", name, m)
		}
		for _, k := range []string{"avg", "stddev", "p50", "p90", "p95", "p99", "p999", "max"} {
			num(t, lat, k)
		}
		if !(num(t, lat, "avg") > 0 && num(t, lat, "p50") <= num(t, lat, "p99") && num(t, lat, "p99") <= num(t, lat, "max")) {
			t.Errorf("%s: implausible latencies %v", name, lat)
		}
		id := str(t, m, "run_id")
		if id == "" || slices.Contains(ids, id) {
			t.Fatalf("%s: run_id %q empty or repeated (%v)", name, id, ids)
		}
		ids = append(ids, id)
		if str(t, m, "status") != "complete" {
			t.Errorf("%s: status %v", name, m["status"])
		}
		for _, f := range []string{"spec.json", "server.json", "intervals.jsonl", "summary.json", "histograms.hlog"} {
			if _, err := os.Stat(filepath.Join(results, id, f)); err != nil {
				t.Errorf("%s: run directory lacks %s: %v", name, f, err)
			}
		}
		c := pgarena(t, nil, "check", "tpcb", "--dsn", dsn)
		switch {
		case !checkFails && (c.code != 0 || !strings.Contains(c.stdout, "check tpcb: ok")):
			t.Errorf("check after %s:\n%s", name, c)
		case checkFails && (c.code != ExitFailed || !strings.Contains(c.stderr, "check tpcb failed") || !strings.Contains(c.stderr, "-N")):
			t.Errorf("check after %s should fail and name -N as the cause:\n%s", name, c)
		}
		return m
	}

	for _, proto := range []string{"simple", "extended", "prepared"} {
		m := run(proto, "-T", "1s", "-M", proto)
		if got := str(t, m, "query_mode"); got != proto {
			t.Errorf("query_mode %q, want %q", got, proto)
		}
	}
	scriptOf := func(m map[string]any) string {
		p, _ := m["params"].(map[string]any)
		s, _ := p["script"].(string)
		return s
	}
	if m := run("-S", "-T", "1s", "-S"); scriptOf(m) != "select-only" {
		t.Errorf("-S ran script %q", scriptOf(m))
	}
	if m := run("-t 50", "-t", "50"); num(t, m, "transactions") != 100 {
		t.Errorf("-t 50 -c 2: %v transactions, want 100", m["transactions"])
	}
	checkFails = true
	if m := run("-N", "-t", "50", "-N"); scriptOf(m) != "simple-update" || num(t, m, "transactions") != 100 {
		t.Errorf("-N ran script %q, %v transactions", scriptOf(m), m["transactions"])
	}
	// Declaring the simple-update runs (-N) turns the difference into a note.
	if c := pgarena(t, nil, "check", "tpcb", "-N", "--dsn", dsn); c.code != 0 ||
		!strings.Contains(c.stdout, "check tpcb: ok") || !strings.Contains(c.stdout, "note:") {
		t.Errorf("check -N after -N runs should pass with a note:\n%s", c)
	}

	// list: every run, newest first.
	l := mustRun(t, "list", "--results", results)
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(l.stdout), "\n")[1:] {
		f := strings.Fields(line)
		listed = append(listed, f[0])
		if f[len(f)-1] != "complete" {
			t.Errorf("list shows %s as %s", f[0], f[len(f)-1])
		}
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(listed, want) {
		t.Errorf("list order %v, want newest first %v\n%s", listed, want, l.stdout)
	}

	last := ids[len(ids)-1]
	s := mustRun(t, "show", "last", "--results", results)
	for _, w := range []string{"run: " + last + " (tpcb)", "server: PostgreSQL", "status: complete", "number of transactions actually processed: 100", "transaction type: simple-update"} {
		if !strings.Contains(s.stdout, w) {
			t.Errorf("show last lacks %q:\n%s", w, s.stdout)
		}
	}
	if strings.Contains(s.stdout, "password") {
		t.Errorf("show mentions a password:\n%s", s.stdout)
	}
	sj := mustRun(t, "show", "last", "--json", "--results", results)
	m := summaryJSON(t, sj.stdout)
	if str(t, m, "run_id") != last || num(t, m, "transactions") != 100 || str(t, m, "status") != "complete" {
		t.Errorf("show last --json: run_id %v, transactions %v, status %v", m["run_id"], m["transactions"], m["status"])
	}
	// A run id prefix and last~N name runs too.
	if r := mustRun(t, "show", "last~1", "--json", "--results", results); str(t, summaryJSON(t, r.stdout), "run_id") != ids[len(ids)-2] {
		t.Errorf("show last~1 is not the run before the last")
	}
}

// TestEmbedded runs without --dsn: an ephemeral cluster is started, loaded,
// benchmarked and removed.
func TestEmbedded(t *testing.T) {
	// Not parallel: it points TMPDIR, where temporary clusters go, at a
	// private directory, so that whatever appears there is this run's.
	pgtest.Cluster(t) // skips or fails as the other tests when PostgreSQL is missing
	results := t.TempDir()
	tmp := t.TempDir()
	for _, p := range []string{filepath.Dir(tmp), tmp} { // as root, postgres must reach it
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)

	// Watch the cluster directories the run creates while it runs.
	seen := map[string]bool{}
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			entries, _ := os.ReadDir(tmp)
			for _, e := range entries {
				seen[e.Name()] = true
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	env := append(cleanEnv(), "TMPDIR="+tmp) // and no PGHOST, PGDATABASE, PGSERVICE
	r := pgarena(t, env, "run", "tpcb", "-s", "1", "-c", "2", "-T", "1s", "--results", results)
	close(stop)
	<-watched
	if r.code != 0 {
		t.Fatalf("embedded run:\n%s", r)
	}
	for _, w := range []string{"tps = ", "number of clients: 2", "scaling factor: 1", "status: complete"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("summary lacks %q:\n%s", w, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "starting an embedded PostgreSQL") || !strings.Contains(r.stderr, "init tpcb done") {
		t.Errorf("stderr does not show the embedded cluster starting and loading:\n%s", r.stderr)
	}
	st, err := store.Open(results)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.Load("last")
	if err != nil {
		t.Fatal(err)
	}
	if !run.Spec.Embedded || !strings.HasPrefix(run.Spec.Target, "embedded PostgreSQL") {
		t.Errorf("spec does not record the embedded target: embedded=%v target=%q", run.Spec.Embedded, run.Spec.Target)
	}
	if run.Summary.Transactions <= 0 || run.Status != "complete" {
		t.Errorf("embedded run: %d transactions, status %s", run.Summary.Transactions, run.Status)
	}
	logb, err := os.ReadFile(filepath.Join(run.Dir, "server.log"))
	if err != nil {
		t.Fatalf("server.log: %v", err)
	}
	if !strings.Contains(string(logb), "database system is ready to accept connections") {
		t.Errorf("server.log does not look like the server's log:\n%s", logb)
	}

	var clusters []string
	for name := range seen {
		if strings.HasPrefix(name, "pgarena-") {
			clusters = append(clusters, name)
		}
	}
	if len(clusters) == 0 {
		t.Errorf("saw no temporary cluster directory appear in %s during the run (saw %v)", tmp, seen)
	}
	// As root, the run names the data directory it gave the server account.
	if _, after, ok := strings.Cut(r.stderr, "its data directory "); ok {
		dataDir, _, _ := strings.Cut(after, " ")
		if !strings.HasPrefix(dataDir, tmp+"/pgarena-") {
			t.Errorf("the embedded cluster's data directory %s is not under TMPDIR %s", dataDir, tmp)
		}
		if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
			t.Errorf("the embedded cluster's data directory %s remains: %v", dataDir, err)
		}
	}
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		t.Errorf("the embedded run left %s behind", filepath.Join(tmp, e.Name()))
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	r := mustRun(t, "version")
	if !strings.HasPrefix(r.stdout, "pgarena ") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("version: %q", r.stdout)
	}
	for _, args := range [][]string{{"run", "--help"}, {"run", "tpcb", "--help"}, {"init", "tpcb", "--help"}, {"--help"}} {
		r := mustRun(t, args...)
		if !strings.Contains(r.stdout, "Examples:") || !strings.Contains(r.stdout, "pgarena ") {
			t.Errorf("%v has no examples:\n%s", args, r.stdout)
		}
	}
	// Every workload's help shows its own examples, not the whole list.
	for _, m := range workload.All() {
		if strings.HasPrefix(m.Name, "zz-") { // registered by a test
			continue
		}
		verbs := []string{"run", "check", "drop"}
		if m.Name != "script" { // no schema of its own
			verbs = append(verbs, "init")
		} else {
			verbs = verbs[:1]
		}
		for _, verb := range verbs {
			out := mustRun(t, verb, m.Name, "--help").stdout
			_, examples, _ := strings.Cut(out, "Examples:")
			examples, _, _ = strings.Cut(examples, "Flags:")
			if !strings.Contains(examples, "pgarena "+verb+" "+m.Name+" ") {
				t.Errorf("%s %s --help has no example of its own:\n%s", verb, m.Name, out)
			}
		}
	}
	r = mustRun(t, "run", "tpcb", "--help")
	for _, flag := range []string{"--clients", "--time", "--transactions", "--protocol", "--scale", "--select-only", "--dsn", "--results"} {
		if !strings.Contains(r.stdout, flag) {
			t.Errorf("run tpcb --help lacks %s", flag)
		}
	}
}

// TestClusterRoundTrip drives a named cluster through start, env, status,
// use, stop and rm.
func TestClusterRoundTrip(t *testing.T) {
	pgtest.Cluster(t) // skip or fail like the rest when PostgreSQL is missing
	home := t.TempDir()
	// As root the server runs as postgres, which must reach the directory.
	for _, p := range []string{filepath.Dir(home), home} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if _, err := local.OpenNamed(local.Env{"PGARENA_HOME=" + home}, "t1"); err == nil {
			if err := local.RemoveNamed(local.Env{"PGARENA_HOME=" + home}, "t1"); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	env := append(cleanEnv(), "PGARENA_HOME="+home)
	do := func(args ...string) result {
		t.Helper()
		r := pgarena(t, env, args...)
		if r.code != 0 {
			t.Fatalf("pgarena %s:\n%s", strings.Join(args, " "), r)
		}
		return r
	}

	r := do("cluster", "start", "--name", "t1", "--max-connections", "30")
	if !strings.Contains(r.stdout, "cluster t1 running: host=") || !strings.Contains(r.stdout, "--cluster t1") {
		t.Errorf("cluster start:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(home, "clusters", "t1", "data", "PG_VERSION")); err != nil {
		t.Errorf("the cluster is not under PGARENA_HOME: %v", err)
	}
	r = do("cluster", "env", "t1")
	for _, k := range []string{"export PGHOST='", "export PGPORT='", "export PGUSER='pgarena'", "export PGDATABASE='postgres'"} {
		if !strings.Contains(r.stdout, k) {
			t.Errorf("cluster env lacks %q:\n%s", k, r.stdout)
		}
	}
	r = do("cluster", "status")
	if !hasRow(r.stdout, "t1", "running") {
		t.Errorf("cluster status does not show t1 running:\n%s", r.stdout)
	}
	// The cluster is usable by name.
	u := pgarena(t, env, "check", "tpcb", "--cluster", "t1")
	wantUsage(t, u, "not initialised", "pgarena init tpcb")

	r = do("cluster", "stop", "t1")
	if strings.TrimSpace(r.stdout) != "stopped" {
		t.Errorf("cluster stop: %q", r.stdout)
	}
	r = do("cluster", "status", "t1")
	if !hasRow(r.stdout, "t1", "stopped") {
		t.Errorf("cluster status t1 after stop:\n%s", r.stdout)
	}
	u = pgarena(t, env, "check", "tpcb", "--cluster", "t1")
	wantUsage(t, u, `cluster "t1" is not running`)

	r = do("cluster", "rm", "t1")
	if strings.TrimSpace(r.stdout) != "removed" {
		t.Errorf("cluster rm: %q", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(home, "clusters", "t1")); !os.IsNotExist(err) {
		t.Errorf("cluster rm left its directory: %v", err)
	}
	wantUsage(t, pgarena(t, env, "cluster", "env", "t1"), "no cluster named t1")
	s := pgarena(t, env, "cluster", "status", "t1")
	if s.code != ExitUsage || !strings.Contains(s.stderr, `no cluster named "t1"`) {
		t.Errorf("cluster status of a removed cluster:\n%s", s)
	}
}

// hasRow reports whether a table printed by pgarena has a row starting with
// name and containing word.
func hasRow(out, name, word string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[0] == name && slices.Contains(f, word) {
			return true
		}
	}
	return false
}

// TestDropOnlyOwnTables: drop removes pgarena's tables and nothing else.
func TestDropOnlyOwnTables(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	conn := connect(t, dsn)
	all := []string{"pgbench_accounts", "pgbench_branches", "pgbench_history", "pgbench_tellers"}

	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	exec(t, conn, "create table mine (x int); insert into mine values (42)")
	if got := tables(t, conn); !slices.Equal(got, append([]string{"mine"}, all...)) {
		t.Fatalf("after init: tables %v", got)
	}
	r := mustRun(t, "drop", "tpcb", "--dsn", dsn)
	for _, tb := range all {
		if !strings.Contains(r.stdout, tb) {
			t.Errorf("drop does not name %s: %s", tb, r.stdout)
		}
	}
	if got := tables(t, conn); !slices.Equal(got, []string{"mine"}) {
		t.Errorf("after drop: tables %v, want only mine", got)
	}
	r = mustRun(t, "drop", "tpcb", "--dsn", dsn)
	if !strings.Contains(r.stdout, "nothing to drop") {
		t.Errorf("second drop: %s", r)
	}

	// A pgbench_history that pgarena did not create survives drop.
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	exec(t, conn, "drop table pgbench_history; create table pgbench_history (note text); insert into pgbench_history values ('mine')")
	r = mustRun(t, "drop", "tpcb", "--dsn", dsn)
	if strings.Contains(r.stdout, "pgbench_history") {
		t.Errorf("drop claims to have dropped the foreign pgbench_history: %s", r.stdout)
	}
	if !strings.Contains(r.stderr, "left alone (not created by pgarena for tpcb): pgbench_history") {
		t.Errorf("drop does not note the table it left alone:\n%s", r.stderr)
	}
	if got := tables(t, conn); !slices.Equal(got, []string{"mine", "pgbench_history"}) {
		t.Errorf("after drop with a foreign history: tables %v", got)
	}
	var note string
	if err := conn.QueryRow(t.Context(), "select note from pgbench_history").Scan(&note); err != nil || note != "mine" {
		t.Errorf("the foreign pgbench_history was changed: %q, %v", note, err)
	}
}
