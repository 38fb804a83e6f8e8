package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

func statementSummary(maxTries int, types ...string) metrics.Summary {
	s := metrics.Summary{MaxTries: maxTries}
	retries := int64(0)
	if maxTries > 1 {
		retries = 93
	}
	for _, name := range types {
		s.Tx = append(s.Tx, metrics.TxSummary{Name: name, Statements: []metrics.StatementSummary{
			{Command: `\set aid random(1, 100000 * :scale)`, Count: 900, AvgMS: 0.0012},
			{Command: `UPDATE t SET v = '<b>' WHERE id = :aid;`, Count: 800, AvgMS: 1.2346, Failures: 7, Retries: retries},
		}})
	}
	return s
}

func statementLines(s metrics.Summary) string {
	var b strings.Builder
	statementsText(func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }, &s)
	return b.String()
}

// TestStatementsText: -r's rows in pgbench 15's layout (mean ms, failures,
// and retries when --max-tries is above 1), so parsers of pgbench's output
// read them; several scripts each get a "SQL script N" block.
func TestStatementsText(t *testing.T) {
	for _, tc := range []struct {
		name string
		sum  metrics.Summary
		want string
	}{
		{"max-tries 1", statementSummary(1, "tpcb-like"), "statement latencies in milliseconds and failures:\n" +
			"         0.001           0  \\set aid random(1, 100000 * :scale)\n" +
			"         1.235           7  UPDATE t SET v = '<b>' WHERE id = :aid;\n"},
		{"max-tries 3", statementSummary(3, "tpcb-like"), "statement latencies in milliseconds, failures and retries:\n" +
			"         0.001           0           0  \\set aid random(1, 100000 * :scale)\n" +
			"         1.235           7          93  UPDATE t SET v = '<b>' WHERE id = :aid;\n"},
		{"two scripts", statementSummary(1, "a", "b"), "SQL script 1: a\n - statement latencies in milliseconds and failures:\n" +
			"         0.001           0  \\set aid random(1, 100000 * :scale)\n" +
			"         1.235           7  UPDATE t SET v = '<b>' WHERE id = :aid;\n" +
			"SQL script 2: b\n - statement latencies in milliseconds and failures:\n" +
			"         0.001           0  \\set aid random(1, 100000 * :scale)\n" +
			"         1.235           7  UPDATE t SET v = '<b>' WHERE id = :aid;\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statementLines(tc.sum); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if got := statementLines(metrics.Summary{Tx: []metrics.TxSummary{{Name: "x"}}}); got != "" {
		t.Errorf("without -r: %q", got)
	}
}

// TestHTMLStatementsTable: a run with -r figures gets the statements panel
// (a table per script: mean, completions, failures, retries, command), its
// commands escaped; a run without gets none.
func TestHTMLStatementsTable(t *testing.T) {
	t.Parallel()
	r := &store.Run{ID: "20261122-031512-tpcb", Status: "complete", Spec: store.RunSpec{Workload: "tpcb"},
		Summary: statementSummary(3, "tpcb-like")}
	h := renderHTML(t, []*store.Run{r})
	for _, want := range []string{`href="#statements"`, `<section id="statements">`, "<td>1.235</td><td>800</td><td>7</td><td>93</td>",
		"UPDATE t SET v = &#39;&lt;b&gt;&#39; WHERE id = :aid;"} {
		if !strings.Contains(h, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(h, "'<b>'") {
		t.Error("a command reached the page unescaped")
	}
	plain := &store.Run{ID: "20261122-031512-tpcb", Status: "complete", Spec: store.RunSpec{Workload: "tpcb"}}
	if h := renderHTML(t, []*store.Run{plain}); strings.Contains(h, `id="statements"`) {
		t.Error("a run without -r has a statements panel")
	}
}
