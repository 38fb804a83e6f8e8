package cli

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target/local"
)

// TestReplicaLogicalSweep: an embedded primary with a built-in logical
// subscriber, a two-step sweep: the summary shows the replication table,
// --json has the replication part per step and for the run, and nothing is
// left behind.
func TestReplicaLogicalSweep(t *testing.T) {
	t.Parallel()
	tmp, err := os.MkdirTemp("", "pgarena-replica-cli-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755) // as root, the server account must reach it
	env := append(cleanEnv(), "TMPDIR="+tmp)
	// The waits' deadlines are within the test's budget: a replica that
	// cannot follow fails the run with its servers' words.
	r := pgarena(t, env, "run", "tpcb", "-s", "1", "-c", "1,2", "-T", "1s", "--replica", "logical",
		"--replica-sync-timeout", "1m", "--catch-up-timeout", "1m",
		"--pg-set", "fsync=off", "--json", "--results", t.TempDir())
	if r.code != 0 {
		t.Fatalf("run --replica logical:\n%s", r)
	}
	for _, w := range []string{"replication (lag by pgarena's heartbeat", "replication per step:", "sustainable tps = "} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("summary lacks %q:\n%s", w, r.stderr)
		}
	}
	m := summaryJSON(t, r.stdout)
	rep, ok := m["replication"].(map[string]any)
	if !ok {
		t.Fatalf("--json has no replication object: %v", m)
	}
	if num(t, rep, "sustainable_tps") <= 0 || rep["caught_up"] != true {
		t.Errorf("replication %v", rep)
	}
	steps, _ := m["steps"].([]any)
	for _, s := range steps {
		if _, ok := s.(map[string]any)["replication"].(map[string]any); !ok {
			t.Errorf("step without replication: %v", s)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the run left %d entries in %s: %s", len(left), tmp, left[0].Name())
	}
}

// TestReplicaBadInput: --replica with --dsn, an unknown kind, or a
// --failover not within the measured time, is one line and exit 2.
func TestReplicaBadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "tpcb", "--replica", "bucardo"},
		{"run", "tpcb", "--dsn", "host=/nonexistent", "--replica", "streaming"},
		{"run", "tpcb", "--replica-dsn", "host=/nonexistent port=x"},
		{"run", "tpcb", "-T", "10s", "--failover", "3s"},
		{"run", "tpcb", "-T", "10s", "--failover", "20s", "--replica", "streaming"},
		{"run", "tpcb", "-T", "10s", "--failover", "10s", "--replica", "streaming"},
		{"run", "tpcb", "-T", "10s", "--failover", "0", "--replica", "streaming"},
		{"run", "tpcb", "-T", "10s", "--failover", "-1s", "--replica", "streaming"},
		{"run", "tpcb", "-T", "10s", "--failover", "3s", "--replica", "logical"},
		{"run", "tpcb", "-t", "100", "--failover", "3s", "--replica", "streaming"},
		{"run", "tpcb", "--failover-external"},
	} {
		r := pgarena(t, nil, append(args, "--results", t.TempDir())...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: want one line and exit 2:\n%s", args, r)
		}
	}
}

// TestReadDSN: tpcc with --read-dsn naming a standby the test starts:
// order-status and stock-level run there as group "replica" (a write on a
// standby would fail), the rest on the primary, and the standby's lag and
// catch-up are measured too.
func TestReadDSN(t *testing.T) {
	t.Parallel()
	primary, dsn := privatePrimary(t)
	mustRun(t, "init", "tpcc", "-w", "1", "--load-workers", "2", "--dsn", dsn)
	standby := standbyOf(t, primary, nil)
	r := mustRun(t, "run", "tpcc", "-c", "4", "-T", "2s", "--json", "--dsn", dsn, "--read-dsn", standby.DSN("postgres"), "--results", t.TempDir())
	m := summaryJSON(t, r.stdout)
	groups, _ := m["groups"].([]any)
	if len(groups) != 2 {
		t.Fatalf("groups %v: want primary and replica", m["groups"])
	}
	for i, want := range []string{"primary", "replica"} {
		g := groups[i].(map[string]any)
		if g["name"] != want || num(t, g, "transactions") <= 0 || num(t, g, "failed") != 0 {
			t.Errorf("group %d: %v, want %s with transactions and no failures", i, g, want)
		}
	}
	if _, ok := m["replication"].(map[string]any); !ok {
		t.Errorf("no replication part: %v", m)
	}
	conn := connect(t, standby.DSN("postgres"))
	var commits int64
	if err := conn.QueryRow(context.Background(), `select xact_commit from pg_stat_database where datname = current_database()`).Scan(&commits); err != nil || commits < 10 {
		t.Errorf("the standby committed %d transactions (%v): the read-only group did not run there", commits, err)
	}
}

// privatePrimary starts a cluster of the test's own, removed at the end of
// the test, and returns a DSN to its postgres database. A standby of
// pgtest's shared cluster would replay the WAL of every test running beside
// it (their loads, their databases created and dropped) in one process: on
// a loaded host it falls behind by a minute or more, and a wait for it to
// show pgarena's heartbeat runs out.
func privatePrimary(t *testing.T) (*local.Cluster, string) {
	t.Helper()
	c := pgtest.NewCluster(t, nil)
	return c, c.DSN("postgres")
}

// standbyOf starts a streaming standby of primary (privatePrimary) with
// extra settings, removed at the end of the test.
func standbyOf(t *testing.T, primary *local.Cluster, extra map[string]string) *local.Cluster {
	t.Helper()
	settings := primary.Settings()
	for k, v := range extra {
		settings[k] = v
	}
	delete(settings, "port")
	delete(settings, "unix_socket_directories")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	standby, err := local.Start(ctx, local.Options{Env: os.Environ(), BinDir: primary.Binaries().Dir, Settings: settings,
		BaseBackupFrom: primary.TCPDSN("postgres")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { standby.Remove() })
	return standby
}

// TestReplicaStoppedDegradesRun: a --replica-dsn standby stopped while the
// load runs: its lag keeps growing, it does not catch up, and the run says
// so — degraded, exit 1, caught_up false and the sustainable rate an upper
// bound in --json and the CSV export, findings for the unreadable replica.
// The catch-up wait ends once the standby is found down (its connection
// error in the summary), not after --catch-up-timeout (5 minutes here).
func TestReplicaStoppedDegradesRun(t *testing.T) {
	t.Parallel()
	primary, dsn := privatePrimary(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	standby := standbyOf(t, primary, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stopped := make(chan error, 1)
	go func() {
		// Stop the standby once the measured load is well under way (100
		// transactions in the history table): it was in sync before.
		conn := connect(t, dsn)
		defer conn.Close(ctx)
		for ctx.Err() == nil {
			var n int
			if err := conn.QueryRow(ctx, `select count(*) from pgbench_history`).Scan(&n); err == nil && n >= 100 {
				stopped <- standby.Stop(ctx)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		stopped <- ctx.Err()
	}()
	results := t.TempDir()
	r := pgarena(t, nil, "run", "tpcb", "-c", "2", "-T", "3s", "--dsn", dsn, "--replica-dsn", standby.DSN("postgres"),
		"--catch-up-timeout", "5m", "--json", "--results", results)
	if err := <-stopped; err != nil {
		t.Fatalf("stopping the standby: %v", err)
	}
	// The standby is down: the run does not wait the catch-up timeout for it.
	if r.elapsed > time.Minute {
		t.Errorf("the run took %s: it waited for a standby that is down", r.elapsed)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "run degraded: replica dsn did not catch up") || strings.Contains(r.stderr, "caught up in") {
		t.Fatalf("want degraded, exit 1, no \"caught up in\":\n%s", r)
	}
	m := summaryJSON(t, r.stdout)
	rep, _ := m["replication"].(map[string]any)
	if m["status"] != "degraded" || rep == nil || rep["caught_up"] != false || rep["sustainable_upper_bound"] != true {
		t.Fatalf("status %v, replication %v", m["status"], rep)
	}
	l := rep["replicas"].([]any)[0].(map[string]any)
	if num(t, l, "lag_end_s") < 1 || num(t, l, "lag_max_s") < 1 || num(t, l, "unreadable_s") < 1 || num(t, l, "failed_reads") < 1 {
		t.Errorf("replica stopped for over 2 s of the load: %v", l)
	}
	if e, _ := l["error"].(string); !strings.Contains(e, "connect") || num(t, l, "catch_up_s") > 30 {
		t.Errorf("replica down: error %q, catch_up_s %v; want its connection error, no long wait", l["error"], l["catch_up_s"])
	}
	if !strings.Contains(r.stderr, "did not catch up within") || !strings.Contains(r.stderr, "it is down (") {
		t.Errorf("stderr does not say the replica is down:\n%s", r.stderr)
	}
	for _, w := range []string{"findings:", "replica dsn could not be read"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	out := mustRun(t, "export", "--format", "csv", "--results", results)
	if !strings.Contains(out.stdout, ",false,true,") {
		t.Errorf("CSV export lacks caught_up false, sustainable_upper_bound true:\n%s", out.stdout)
	}
}

// TestReplicaDSNChecked: --replica-dsn is checked before the run, each a
// line and exit 2: the primary's own DSN, a server that does not answer,
// and another server that does not replicate the heartbeat (refused within
// replica.ShowWait, not after 2 minutes).
func TestReplicaDSNChecked(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	run := func(rdsn string) result {
		return pgarena(t, nil, "run", "tpcb", "-c", "1", "-T", "1s", "--dsn", dsn, "--replica-dsn", rdsn, "--results", t.TempDir())
	}
	r := run(dsn)
	wantUsage(t, r, "--replica-dsn", "the primary itself")
	t.Logf("the primary itself: exit %d after %s", r.code, r.elapsed.Round(time.Millisecond))
	r = run("host=127.0.0.1 port=1 user=nobody dbname=nothing connect_timeout=2")
	wantUsage(t, r, "--replica-dsn", "cannot connect")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "pgarena-replica-check-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755) // as root, the server account must reach it
	other, err := local.Start(ctx, local.Options{Env: append(os.Environ(), "TMPDIR="+tmp), BinDir: pgtest.Cluster(t).Binaries().Dir,
		Settings: map[string]string{"fsync": "off", "shared_buffers": "16MB"}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Remove()
	r = run(other.DSN("postgres"))
	t.Logf("a server without the heartbeat: exit %d after %s", r.code, r.elapsed.Round(100*time.Millisecond))
	last := strings.TrimSpace(r.stderr)
	last = last[strings.LastIndex(last, "\n")+1:]
	if r.code != 2 || !strings.HasPrefix(last, "pgarena: replica ") || !strings.Contains(last, "shows no new beat") || r.elapsed > 40*time.Second {
		t.Errorf("a server that does not replicate the heartbeat: want exit 2 within 40 s, last line naming it:\n%s", r)
	}
}

// TestReplicaDSNBehindIsWaitedFor: a standby that replays the primary's WAL
// 13 s late (recovery_min_apply_delay) shows no beat within
// replica.ShowWait, but replays: it is waited for, not refused, and its
// lag is measured.
func TestReplicaDSNBehindIsWaitedFor(t *testing.T) {
	t.Parallel()
	primary, dsn := privatePrimary(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	standby := standbyOf(t, primary, map[string]string{"recovery_min_apply_delay": "13s"})
	r := mustRun(t, "run", "tpcb", "-c", "1", "-T", "2s", "--dsn", dsn, "--replica-dsn", standby.DSN("postgres"),
		"--catch-up-timeout", "60s", "--json", "--results", t.TempDir())
	rep, _ := summaryJSON(t, r.stdout)["replication"].(map[string]any)
	if rep == nil || rep["caught_up"] != true || num(t, rep, "catch_up_s") < 10 {
		t.Errorf("replication %v: want caught up after about 13 s", rep)
	}
}
