package cli

import (
	"os"
	"strings"
	"testing"
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
	r := pgarena(t, env, "run", "tpcb", "-s", "1", "-c", "1,2", "-T", "1s", "--replica", "logical",
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
