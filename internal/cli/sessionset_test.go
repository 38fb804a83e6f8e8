package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
)

// TestSessionSet: --session-set reaches every workload connection (a
// script that fails without the custom setting runs without failures),
// is recorded in spec.json and shown in the summary; a group no run has,
// or a malformed setting, is bad input.
func TestSessionSet(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	script := filepath.Join(t.TempDir(), "s.sql")
	// current_setting fails on a setting the session lacks
	if err := os.WriteFile(script, []byte("select 1 / (current_setting('pgarena.probe')::int - 41);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(t.TempDir(), "results")
	r := mustRun(t, "run", "script", "-f", script, "-c", "2", "-t", "5", "--dsn", dsn, "--results", results,
		"--session-set", "pgarena.probe=42", "--session-set", "work_mem=5MB", "--progress", "0")
	if !strings.Contains(r.stdout, "number of failed transactions: 0 ") || !strings.Contains(r.stdout, "session settings: pgarena.probe=42, work_mem=5MB") {
		t.Errorf("run with the setting:\n%s", r)
	}
	dirs, _ := filepath.Glob(filepath.Join(results, "*", store.SpecFile))
	if len(dirs) != 1 {
		t.Fatalf("spec files %v", dirs)
	}
	b, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var spec store.RunSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	if strings.Join(spec.SessionSettings, " ") != "pgarena.probe=42 work_mem=5MB" {
		t.Errorf("spec.json session_settings %v", spec.SessionSettings)
	}
	wantUsage(t, pgarena(t, nil, "run", "script", "-f", script, "-t", "1", "--dsn", dsn, "--results", results, "--session-set", "olap:work_mem=5MB"),
		`--session-set "olap:work_mem=5MB": no client group "olap" (this run has one client group: leave out the group)`)
	wantUsage(t, pgarena(t, nil, "run", "script", "-f", script, "-t", "1", "--dsn", dsn, "--results", results, "--session-set", "work_mem"),
		`--session-set "work_mem": want key=value`)
}
