package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
)

func TestSummaryTextGroups(t *testing.T) {
	s := metrics.Summary{RunID: "r", Workload: "tpcb", Status: metrics.StatusComplete, Groups: []metrics.GroupSummary{
		{Name: "reads", Workload: "tpcb", Clients: 2, QueryMode: "prepared", TPS: 900.5},
		{Name: "writes", Workload: "tpcb", Clients: 2, QueryMode: "simple", TPS: 100.25, Failed: 3},
	}}
	var b bytes.Buffer
	SummaryText(&b, &s)
	out := b.String()
	for _, want := range []string{"client groups (the numbers above cover all groups together):", "reads", "prepared", "900.5", "writes", "100.2"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
