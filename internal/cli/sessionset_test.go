package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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

// TestWorkerDSN: --worker-dsn samples the workers given, in place of the
// coordinator's list, with the CPU of a worker on this host, drawn in the
// report; a DSN that does not parse is bad input.
func TestWorkerDSN(t *testing.T) {
	t.Parallel()
	dsn := pgtest.CitusDSN(t)
	w0 := pgtest.CitusCluster(t).Workers[0].Port()
	script := filepath.Join(t.TempDir(), "s.sql")
	if err := os.WriteFile(script, []byte("select pg_sleep(0.05);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(t.TempDir(), "results")
	mustRun(t, "run", "script", "-f", script, "-T", "3", "--dsn", dsn, "--results", results, "--progress", "0",
		"--sample-interval", "250ms", "--worker-dsn", pgtest.CitusWorkerDSN(t, dsn, 0))
	files, _ := filepath.Glob(filepath.Join(results, "*", "samples.jsonl"))
	if len(files) != 1 {
		t.Fatalf("samples files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "citus.127_0_0_1_"+strconv.Itoa(w0)+".connections.client") || strings.Count(string(b), `"worker":`) == 0 {
		t.Errorf("no samples of worker 0 (port %d)", w0)
	}
	// worker 0 listens on 127.0.0.1 here: its postgres processes' CPU is read
	if !strings.Contains(string(b), "citus.127_0_0_1_"+strconv.Itoa(w0)+".cpu_cores") {
		t.Errorf("no CPU samples of worker 0 (port %d), on this host", w0)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	mustRun(t, "report", "last", "-o", out, "--results", results)
	if html, err := os.ReadFile(out); err != nil || !strings.Contains(string(html), `"citus-worker-cpu"`) {
		t.Errorf("report lacks the workers' CPU chart (%v)", err)
	}
	w1 := pgtest.CitusCluster(t).Workers[1].Port()
	if strings.Contains(string(b), "citus.127_0_0_1_"+strconv.Itoa(w1)+".") {
		t.Errorf("worker 1 sampled though --worker-dsn named only worker 0")
	}
	wantUsage(t, pgarena(t, nil, "run", "script", "-f", script, "-t", "1", "--dsn", dsn, "--results", results, "--worker-dsn", "host=x port=notaport"),
		"--worker-dsn:")
}
