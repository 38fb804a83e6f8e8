package cli

import (
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestYCSB drives ycsb through the CLI: init with progress, a workload E
// run (scans and inserts, per-operation summary), check, and bad input.
func TestYCSB(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	conn := connect(t, dsn)
	results := t.TempDir()

	wantUsage(t, pgarena(t, nil, "init", "ycsb", "--records", "0", "--dsn", dsn), "ycsb: --records must be at least 1 (got 0)")
	r := mustRun(t, "init", "ycsb", "--records", "3000", "--load-workers", "2", "--dsn", dsn)
	for _, want := range []string{"loaded usertable ", "init ycsb done: "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("init output lacks %q:\n%s", want, r.stderr)
		}
	}
	wantUsage(t, pgarena(t, nil, "run", "ycsb", "--workload", "g", "--dsn", dsn), `ycsb: --workload "g": want one of a, b, c, d, e, f`)
	wantUsage(t, pgarena(t, nil, "run", "ycsb", "--read-proportion", "0.9", "--dsn", dsn), "ycsb: the operation proportions of workload a add up to 1.4, want 1")

	// --check with --json: the check's line goes to stderr, stdout stays one JSON value.
	// A fixed number of transactions (not -T) from the default seed: 300
	// draws, none of them one of workload e's 5% inserts with probability
	// 0.95^300 < 1e-6 (a loaded host runs few scans a second).
	r = mustRun(t, "run", "ycsb", "--workload", "e", "-c", "2", "-t", "150", "--json", "--check", "--dsn", dsn, "--results", results)
	if !strings.Contains(r.stderr, "check ycsb: ok") {
		t.Errorf("run --check printed no check line on stderr:\n%s", r.stderr)
	}
	m := summaryJSON(t, r.stdout)
	if str(t, m, "query_mode") != "prepared" || num(t, m, "failed") != 0 {
		t.Errorf("query_mode %v failed %v, want ycsb's default prepared and no failure", m["query_mode"], m["failed"])
	}
	params, _ := m["params"].(map[string]any)
	if params["workload"] != "e" || params["request_distribution"] != "zipfian" || params["max_scan_length"] != "100" {
		t.Errorf("params %v", params)
	}
	byType, _ := m["by_type"].(map[string]any)
	var inserts float64
	for _, tx := range []string{"scan", "insert"} {
		s, ok := byType[tx].(map[string]any)
		if !ok {
			t.Fatalf("by_type has no %s: %v", tx, byType)
		}
		if n := num(t, s, "transactions"); n == 0 {
			t.Errorf("no %s committed", tx)
		} else if tx == "insert" {
			inserts = n
			if d, ok := s["committed_in_drain"].(float64); ok {
				inserts += d // after the measured time, but in the table
			}
		}
	}
	if _, ok := byType["read"]; ok {
		t.Errorf("by_type lists read, which workload e does not run: %v", byType)
	}
	var rows float64
	if err := conn.QueryRow(t.Context(), "select count(*)::float8 from usertable").Scan(&rows); err != nil || rows != 3000+inserts {
		t.Errorf("usertable has %v rows (%v), want 3000 + %v inserts", rows, err, inserts)
	}
	mustRun(t, "check", "ycsb", "--dsn", dsn)
	mustRun(t, "drop", "ycsb", "--dsn", dsn)
}
