package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestTPCH drives tpch through the CLI at scale 0.01: init (progress per
// table), check --answers, a power run and a throughput run of 2 streams that end
// by themselves, complete, with their figures, refresh sets advancing
// across the runs without key errors, bad flags refused.
func TestTPCH(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	r := mustRun(t, "init", "tpch", "--scale", "0.01", "--load-workers", "2", "--dsn", dsn)
	for _, want := range []string{"loaded lineitem ", "loaded orders ", "loaded nation ", "init tpch done: "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("init output lacks %q:\n%s", want, r.stderr)
		}
	}
	r = mustRun(t, "check", "tpch", "--answers", "--dsn", dsn)
	if !strings.Contains(r.stdout, "check tpch: ok") {
		t.Errorf("check --answers: %s", r)
	}
	wantUsage(t, pgarena(t, nil, "run", "tpch", "--streams", "3", "--dsn", dsn, "--results", results), "--streams", "--throughput")
	wantUsage(t, pgarena(t, nil, "run", "tpch", "--queries", "1,23", "--dsn", dsn, "--results", results), "--queries", "23")
	wantUsage(t, pgarena(t, nil, "run", "tpch", "--power", "-c", "2", "--dsn", dsn, "--results", results), "leave out -c")

	r = mustRun(t, "run", "tpch", "--power", "--explain-slowest", "--json", "--dsn", dsn, "--results", results)
	m := summaryJSON(t, r.stdout)
	if m["status"] != "complete" {
		t.Errorf("power run status %v, want complete", m["status"])
	}
	if num(t, m, "power_at_size") <= 0 {
		t.Errorf("power_at_size %v", m["power_at_size"])
	}
	for _, want := range []string{" q1 ", " q22 ", " rf1 ", " rf2 ", "power_at_size = ", "TPC-H-derived, not audited"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("power run output lacks %q:\n%s", want, r.stderr)
		}
	}
	if dir := regexp.MustCompile(`results in (\S+)`).FindStringSubmatch(r.stderr); dir == nil {
		t.Error("no run directory in the output")
	} else if plan, err := os.ReadFile(filepath.Join(dir[1], "explain-slowest.txt")); err != nil || !strings.Contains(string(plan), "Buffers:") {
		t.Errorf("--explain-slowest: %v\n%s", err, plan)
	} else {
		t.Logf("%.600s", plan)
	}
	t.Log(r.stderr)
	r = mustRun(t, "run", "tpch", "--throughput", "--streams", "2", "--json", "--dsn", dsn, "--results", results)
	m = summaryJSON(t, r.stdout)
	if m["status"] != "complete" || num(t, m, "throughput_at_size") <= 0 {
		t.Errorf("throughput run status %v, throughput_at_size %v", m["status"], m["throughput_at_size"])
	}
	if num(t, m, "failed") != 0 {
		t.Errorf("throughput run: failures %v", m["errors"])
	}
	t.Log(r.stderr)
	r = mustRun(t, "run", "tpch", "--power", "--throughput", "--streams", "2", "--json", "--dsn", dsn, "--results", results)
	m = summaryJSON(t, r.stdout)
	if m["status"] != "complete" || num(t, m, "failed") != 0 {
		t.Errorf("power and throughput run: status %v, failures %v", m["status"], m["errors"])
	}
	if p, tp, q := num(t, m, "power_at_size"), num(t, m, "throughput_at_size"), num(t, m, "qphh_at_size"); p <= 0 || tp <= 0 || q < min(p, tp) || q > max(p, tp) {
		t.Errorf("power %v, throughput %v, QphH %v: want all > 0, QphH their geometric mean", p, tp, q)
	}
	t.Log(r.stderr)
	r = mustRun(t, "run", "tpch", "--queries", "1,6", "--repeat", "2", "--json", "--dsn", dsn, "--results", results)
	if m := summaryJSON(t, r.stdout); num(t, m, "transactions") != 4 || m["status"] != "complete" {
		t.Errorf("--queries 1,6 --repeat 2: %v transactions, status %v; want 4, complete", m["transactions"], m["status"])
	}
	if !regexp.MustCompile(`tps +min +avg +p50`).MatchString(r.stderr) || strings.Contains(r.stderr, " q2 ") {
		t.Errorf("--queries: the per-query table has no min column or has other queries:\n%s", r.stderr)
	}
	t.Log(r.stderr)
	r = mustRun(t, "run", "tpch", "-c", "2", "-T", "2s", "--json", "--dsn", dsn, "--results", results) // looped streams
	if m := summaryJSON(t, r.stdout); m["status"] != "complete" || num(t, m, "queries_per_hour") <= 0 || num(t, m, "failed") != 0 {
		t.Errorf("looped streams: status %v, queries/hour %v, failures %v", m["status"], m["queries_per_hour"], m["errors"])
	}
	r = mustRun(t, "check", "tpch", "--dsn", dsn)
	if !strings.Contains(r.stdout, "check tpch: ok") {
		t.Errorf("check: %s", r)
	}
	wantUsage(t, pgarena(t, nil, "check", "tpch", "--answers", "--dsn", dsn), "refresh sets have changed the data")
}
