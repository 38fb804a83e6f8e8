package cli

import (
	"context"
	"os"
	"regexp"
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

// TestReplicaBadInput: --replica with --dsn, or an unknown kind, is one line
// and exit 2.
func TestReplicaBadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "tpcb", "--replica", "slony"},
		{"run", "tpcb", "--dsn", "host=/nonexistent", "--replica", "streaming"},
		{"run", "tpcb", "--replica-dsn", "host=/nonexistent port=x"},
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
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcc", "-w", "1", "--load-workers", "2", "--dsn", dsn)
	c := pgtest.Cluster(t)
	settings := c.Settings()
	delete(settings, "port")
	delete(settings, "unix_socket_directories")
	db := strings.TrimPrefix(regexp.MustCompile(`dbname=\S+`).FindString(dsn), "dbname=")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	standby, err := local.Start(ctx, local.Options{Env: os.Environ(), BinDir: c.Binaries().Dir, Settings: settings,
		BaseBackupFrom: c.TCPDSN(db)})
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Remove()
	r := mustRun(t, "run", "tpcc", "-c", "4", "-T", "2s", "--json", "--dsn", dsn, "--read-dsn", standby.DSN(db), "--results", t.TempDir())
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
	conn := connect(t, standby.DSN(db))
	var commits int64
	if err := conn.QueryRow(ctx, `select xact_commit from pg_stat_database where datname = current_database()`).Scan(&commits); err != nil || commits < 10 {
		t.Errorf("the standby committed %d transactions (%v): the read-only group did not run there", commits, err)
	}
}
