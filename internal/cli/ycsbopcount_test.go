package cli

import (
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestYCSBOperationCountAndSlices: two inits with --insert-start and
// --insert-count load usertable together (the second builds the key), and
// a run with --operation-count does exactly that many operations over its
// clients; counts that the clients cannot share, or that come with -T,
// are bad input.
func TestYCSBOperationCountAndSlices(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	conn := connect(t, dsn)
	results := t.TempDir()

	wantUsage(t, pgarena(t, nil, "init", "ycsb", "--records", "1000", "--insert-start", "600", "--insert-count", "500", "--dsn", dsn),
		"ycsb: --insert-start 600 + --insert-count 500 pass --records 1000")
	mustRun(t, "init", "ycsb", "--records", "1000", "--insert-start", "400", "--load-workers", "2", "--dsn", dsn)
	r := pgarena(t, nil, "run", "ycsb", "-T", "1s", "--dsn", dsn, "--results", results)
	if r.code == 0 || !strings.Contains(r.stderr, "the load by --insert-start/--insert-count is incomplete (key numbers loaded: 400-999)") {
		t.Errorf("run on half a load: exit %d\n%s", r.code, r.stderr)
	}
	mustRun(t, "init", "ycsb", "--records", "1000", "--insert-start", "0", "--insert-count", "400", "--load-workers", "2", "--dsn", dsn)
	mustRun(t, "check", "ycsb", "--dsn", dsn)

	wantUsage(t, pgarena(t, nil, "run", "ycsb", "--operation-count", "301", "-c", "3", "--dsn", dsn),
		"--operation-count 301 cannot be shared evenly by 3 clients (pgarena runs -t transactions per client): give a multiple of 3")
	wantUsage(t, pgarena(t, nil, "run", "ycsb", "--operation-count", "300", "-T", "5s", "--dsn", dsn),
		"give either --operation-count or -T/--time or -t/--transactions, not two of them")
	r = mustRun(t, "run", "ycsb", "--workload", "b", "--operation-count", "300", "-c", "3", "--json", "--dsn", dsn, "--results", results)
	m := summaryJSON(t, r.stdout)
	params, _ := m["params"].(map[string]any)
	if params["operation_count"] != "300" {
		t.Errorf("params %v", params)
	}
	byType, _ := m["by_type"].(map[string]any)
	var total float64
	for _, tx := range []string{"read", "update"} {
		if s, ok := byType[tx].(map[string]any); ok {
			total += num(t, s, "transactions")
		}
	}
	if total != 300 || num(t, m, "failed") != 0 {
		t.Errorf("%v operations, %v failed, want 300 and none", total, m["failed"])
	}
	var rows int
	if err := conn.QueryRow(t.Context(), "select count(*) from usertable").Scan(&rows); err != nil || rows != 1000 {
		t.Errorf("%d rows (%v), want 1000", rows, err)
	}
}
