package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
)

// show --config prints the configuration a run was made with; rerun
// repeats it (the same seed, load model and parameters) with overrides;
// the YAML shown is a --config file.
func TestRerunAndShowConfig(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	mustRun(t, "run", "tpcb", "-S", "-c", "2", "-T", "1", "-R", "200", "--seed", "7", "--dsn", dsn, "--results", results, "--label", "first")
	shown := mustRun(t, "show", "last", "--config", "--results", results).stdout
	for _, want := range []string{"workload: tpcb", "seed: 7", "rate: \"200\"", "select-only: \"true\"", "label: first"} {
		if !strings.Contains(shown, want) {
			t.Errorf("show --config lacks %q:\n%s", want, shown)
		}
	}
	mustRun(t, "rerun", "last", "--label", "again", "--results", results)
	file := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(file, []byte(shown), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "run", "--config", file, "--label", "from-file", "--results", results)
	st := store.OpenReadOnly(results)
	var configs []map[string]any
	for _, id := range []string{"last~2", "last~1", "last"} {
		run, err := st.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(run.Spec.Config, &m); err != nil {
			t.Fatalf("%s: config %s: %v", id, run.Spec.Config, err)
		}
		delete(m, "label")
		configs = append(configs, m)
	}
	a, _ := json.Marshal(configs[0])
	for i, c := range configs[1:] {
		if b, _ := json.Marshal(c); !bytes.Equal(a, b) {
			t.Errorf("run %d's configuration differs from the first's:\n%s\n%s", i+1, a, b)
		}
	}
}

// A run recorded before configurations were kept: show --config and rerun
// say so in one line, exit 2.
func TestRerunOldRun(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	mustRun(t, "run", "tpcb", "-c", "1", "-t", "5", "--dsn", dsn, "--results", results)
	run, err := store.OpenReadOnly(results).Load("last")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(results, run.Spec.ID, "spec.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "config")
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	wantUsage(t, pgarena(t, nil, "show", "last", "--config", "--results", results), "did not keep run configurations", "run tpcb")
	wantUsage(t, pgarena(t, nil, "rerun", "last", "--results", results), "did not keep run configurations")
}

// A recorded configuration keeps no password: show --config prints none;
// rerun without one fails for authentication in one line saying how to
// give it, and works with PGPASSWORD.
func TestRerunWithoutPassword(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t, nil)
	admin := connect(t, c.DSN("postgres"))
	exec(t, admin, "create role bench login password 'right-Pa55word'")
	exec(t, admin, "create database benchdb owner bench")
	hba := filepath.Join(c.DataDir(), "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hba, append([]byte("host all bench 127.0.0.1/32 scram-sha-256\n"), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	exec(t, admin, "select pg_reload_conf()")
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=bench dbname=benchdb password=right-Pa55word sslmode=disable", c.Port())
	results := t.TempDir()
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	mustRun(t, "run", "tpcb", "-c", "1", "-t", "5", "--dsn", dsn, "--results", results)
	shown := mustRun(t, "show", "last", "--config", "--results", results).stdout
	if strings.Contains(shown, "right-Pa55word") || !strings.Contains(shown, "user=bench") {
		t.Fatalf("show --config:\n%s", shown)
	}
	r := pgarena(t, nil, "rerun", "last", "--results", results)
	wantUsage(t, r, "keeps no password", "--dsn", "PGPASSWORD")
	if strings.Contains(r.stderr, "right-Pa55word") {
		t.Errorf("password printed: %s", r.stderr)
	}
	r = pgarena(t, append(cleanEnv(), "PGPASSWORD=right-Pa55word"), "rerun", "last", "--results", results, "--label", "again")
	if r.code != 0 {
		t.Fatalf("rerun with PGPASSWORD:\n%s", r)
	}
}
