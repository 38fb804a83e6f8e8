package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestTPCC drives tpcc through the CLI: init with per-table progress and a
// fillfactor, a run whose progress lines show NOPM and whose JSON has
// HammerDB's figures and per-type stats, check, a run refused for a
// warehouse count the database does not hold, and drop, which takes the
// stored procedures along.
func TestTPCC(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	conn := connect(t, dsn)
	results := t.TempDir()

	wantUsage(t, pgarena(t, nil, "init", "tpcc", "-w", "1", "--citus", "--dsn", dsn), "--citus: the target has no citus extension")
	wantUsage(t, pgarena(t, nil, "init", "tpcc", "-w", "2", "--warehouse-range", "2-3", "--dsn", dsn), "--warehouse-range \"2-3\"")
	r := mustRun(t, "init", "tpcc", "-w", "1", "--fillfactor", "90", "--load-workers", "2", "--dsn", dsn)
	for _, want := range []string{"loaded stock ", "loaded item ", "loaded order_line ", "primary keys...", "init tpcc done: ",
		"created functions and procedures: pgarena_tpcc_new_order, pgarena_tpcc_payment, pgarena_tpcc_order_status, pgarena_tpcc_delivery, pgarena_tpcc_stock_level, dbms_random, neword, payment, ostat, delivery, slev\n"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("init output lacks %q:\n%s", want, r.stderr)
		}
	}
	var opts string
	if err := conn.QueryRow(t.Context(), "select array_to_string(reloptions, ',') from pg_class where relname = 'stock'").Scan(&opts); err != nil || opts != "fillfactor=90" {
		t.Errorf("stock reloptions %q (%v), want fillfactor=90", opts, err)
	}

	r = mustRun(t, "run", "tpcc", "-c", "2", "-T", "3s", "-P", "1", "--json", "--dsn", dsn, "--results", results)
	if !regexp.MustCompile(`progress: \d+\.\d s, [\d.]+ tps, nopm \d+, lat`).MatchString(r.stderr) {
		t.Errorf("progress lines do not show nopm:\n%s", r.stderr)
	}
	m := summaryJSON(t, r.stdout)
	if str(t, m, "query_mode") != "prepared" {
		t.Errorf("query_mode %v, want tpcc's default prepared", m["query_mode"])
	}
	if num(t, m, "nopm") <= 0 || num(t, m, "tpm") <= 0 || num(t, m, "efficiency") <= 0 {
		t.Errorf("nopm %v, tpm %v, efficiency %v: want all > 0", m["nopm"], m["tpm"], m["efficiency"])
	}
	byType, ok := m["by_type"].(map[string]any)
	if !ok {
		t.Fatalf("no by_type object: %v", m)
	}
	for _, tx := range []string{"new_order", "payment", "order_status", "delivery", "stock_level"} {
		s, ok := byType[tx].(map[string]any)
		if !ok {
			t.Errorf("by_type has no %s", tx)
			continue
		}
		num(t, s, "transactions")
		num(t, s, "failed")
		lat, ok := s["latency_ms"].(map[string]any)
		if !ok {
			t.Errorf("by_type.%s has no latency_ms", tx)
			continue
		}
		for _, k := range []string{"p50", "p90", "p95", "p99", "max"} {
			num(t, lat, k)
		}
	}
	if no, ok := byType["new_order"].(map[string]any); ok {
		num(t, no, "rollbacks")
	}
	for _, want := range []string{"nopm = ", "tpm = ", "efficiency = ", "rollbacks", "\nwarehouses: 1\n", "\nquery mode: prepared\n"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("text summary lacks %q:\n%s", want, r.stderr)
		}
	}

	// The summary says the transactions ran as stored procedures.
	r = mustRun(t, "run", "tpcc", "--stored-procs", "-c", "1", "-T", "1s", "--dsn", dsn, "--results", results)
	if !strings.Contains(r.stdout, "\nquery mode: stored procedures (prepared calls)\n") {
		t.Errorf("--stored-procs summary does not say so:\n%s", r)
	}

	// --functions-only puts back a missing function without touching
	// the data; --stored-procs runs again.
	if _, err := conn.Exec(t.Context(), "drop function pgarena_tpcc_delivery(int, int)"); err != nil {
		t.Fatal(err)
	}
	wantUsage(t, pgarena(t, nil, "run", "tpcc", "--stored-procs", "-c", "1", "-T", "1s", "--dsn", dsn, "--results", results),
		"run `pgarena init tpcc --functions-only` to create them without touching the data")
	r = mustRun(t, "init", "tpcc", "--functions-only", "--dsn", dsn)
	if !strings.Contains(r.stderr, "created 16 functions and procedures, tables and data untouched") {
		t.Errorf("init --functions-only: %s", r)
	}
	mustRun(t, "run", "tpcc", "--stored-procs", "-c", "1", "-T", "1s", "--dsn", dsn, "--results", results)

	r = mustRun(t, "check", "tpcc", "--dsn", dsn)
	if !strings.Contains(r.stdout, "check tpcc: ok") {
		t.Errorf("check: %s", r)
	}
	wantUsage(t, pgarena(t, nil, "run", "tpcc", "-w", "3", "-c", "1", "-T", "1s", "--dsn", dsn, "--results", results),
		"the database holds 1 warehouses but --warehouses 3 was given")

	r = mustRun(t, "drop", "tpcc", "--dsn", dsn)
	if !strings.Contains(r.stdout, "pgarena_tpcc_new_order(") {
		t.Errorf("drop does not name the functions: %s", r.stdout)
	}
	var fns int
	if err := conn.QueryRow(t.Context(), `select count(*) from pg_proc
		where proname like 'pgarena_tpcc_%' or proname in ('neword', 'payment', 'ostat', 'delivery', 'slev', 'dbms_random')`).Scan(&fns); err != nil || fns != 0 {
		t.Errorf("%d of pgarena's and HammerDB's routines left after drop (%v)", fns, err)
	}
}
