package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
)

// The per-type "min" figures (tpch's min/median/max) are a column of the
// HTML report's per-type table, as in the text summary; a run without
// them has no such column, and a type's name stays escaped.
func TestHTMLPerTypeMin(t *testing.T) {
	t.Parallel()
	runs := fixtureRuns(t)
	r := runs[0]
	if len(r.Summary.Tx) < 2 {
		t.Fatalf("fixture 0 has %d types", len(r.Summary.Tx))
	}
	first := r.Summary.Tx[0].Name
	r.Summary.Tx[1].Name = "<b>q2</b>"
	r.Summary.Figures = append(r.Summary.Figures,
		metrics.Figure{Name: "min", Value: 12.345, Unit: "ms", Tx: first},
		metrics.Figure{Name: "min", Value: 0.5, Unit: "ms", Tx: "<b>q2</b>"})
	h := renderHTML(t, runs[:1])
	if !strings.Contains(h, "<th>tps</th><th>min ms</th><th>avg ms</th>") {
		t.Error("the per-type table has no min column")
	}
	if !regexp.MustCompile(`<td class="text">` + regexp.QuoteMeta(first) + `</td>(<td>[^<]*</td>){4}<td>12.35</td>`).MatchString(h) {
		t.Errorf("%s's min 12.35 is not in its row", first)
	}
	if strings.Contains(h, "<b>q2</b>") || !regexp.MustCompile(`&lt;b&gt;q2&lt;/b&gt;</td>(<td>[^<]*</td>){4}<td>0.50</td>`).MatchString(h) {
		t.Error("the type's name is not escaped, or its min is missing")
	}
	if h := renderHTML(t, runs[1:2]); strings.Contains(h, "min ms") {
		t.Error("a run without min figures has a min column")
	}
}
