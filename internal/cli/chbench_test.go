package cli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestCHBench drives chbench through the CLI: init (TPC-C plus supplier,
// nation, region), a run of two client groups whose summary has NOPM and
// QphH side by side (text and JSON) and per-query times, -c refused, and
// check.
func TestCHBench(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	r := mustRun(t, "init", "chbench", "-w", "1", "--load-workers", "2", "--dsn", dsn)
	for _, want := range []string{"loaded supplier ", "loaded nation ", "loaded region ", "loaded order_line ", "init chbench done: "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("init output lacks %q:\n%s", want, r.stderr)
		}
	}
	wantUsage(t, pgarena(t, nil, "run", "chbench", "-c", "4", "-T", "1s", "--dsn", dsn, "--results", results),
		"chbench runs several client groups, each with its own clients (--oltp-clients, --olap-clients): leave out -c")

	r = mustRun(t, "run", "chbench", "--oltp-clients", "2", "--olap-clients", "1", "-T", "5s", "--json", "--dsn", dsn, "--results", results)
	m := summaryJSON(t, r.stdout)
	// 5 s rarely lets the stream reach all 22 queries: then the figure
	// is qphh_partial, saying so
	qphh := "qphh"
	if _, ok := m[qphh]; !ok {
		qphh = "qphh_partial"
	}
	if num(t, m, "nopm") <= 0 || num(t, m, qphh) <= 0 || num(t, m, "tpm") <= 0 {
		t.Errorf("nopm %v, %s %v, tpm %v: want all > 0", m["nopm"], qphh, m[qphh], m["tpm"])
	}
	for _, want := range []string{"chbench, 2 oltp + 1 olap clients", "\nnopm = ", "\n" + qphh + " = ", "NOPM and QphH move against each other",
		"olap/q1", "oltp/new_order"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("run output lacks %q:\n%s", want, r.stderr)
		}
	}
	// the rollbacks of new_order join the type's row, named as the summary
	// names it (oltp/new_order), in JSON and in the per-type table
	byType, _ := m["by_type"].(map[string]any)
	no, _ := byType["oltp/new_order"].(map[string]any)
	if _, ok := no["rollbacks"]; !ok || byType["new_order"] != nil {
		t.Errorf("by_type: rollbacks not with oltp/new_order: %v", byType)
	}
	if !regexp.MustCompile(`(?m)^\s+oltp/new_order\s+\d+\s+\d+\s+` + fmt.Sprint(no["rollbacks"]) + `\s`).MatchString(r.stderr) {
		t.Errorf("per-type table: oltp/new_order lacks its %v rollbacks:\n%s", no["rollbacks"], r.stderr)
	}
	if i, j := strings.Index(r.stderr, "\nnopm = "), strings.Index(r.stderr, "\n"+qphh+" = "); i < 0 || j < i {
		t.Errorf("qphh is not printed after nopm:\n%s", r.stderr)
	}
	t.Log(r.stderr)
	r = mustRun(t, "check", "chbench", "--dsn", dsn)
	if !strings.Contains(r.stdout, "check chbench: ok") {
		t.Errorf("check: %s", r)
	}
}
