package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/store"
)

// TestFailoverEverywhere: a run's failover shows in the summary, the CSV
// export, the plan export and the comparison.
func TestFailoverEverywhere(t *testing.T) {
	s := metrics.Summary{Status: metrics.StatusComplete, DurationS: 10, Transactions: 100, TPS: 10,
		Failover: &metrics.Failover{Fault: "immediate shutdown", Promotion: "pg_promote", Replication: "async",
			FaultAtS: 3, PromotedS: 0.4, DowntimeS: 0.35, FailedDuring: 5, LedgerAcked: 900, AckedLost: 7, InDoubt: 1}}
	s.Failover.ErrorsDuring[pgerr.ClassConnectionLost] = 5
	var b bytes.Buffer
	SummaryText(&b, &s)
	for _, want := range []string{"failover (immediate shutdown of the primary, promotion by pg_promote; standby async)",
		"downtime (fault to first commit on the new primary) 0.350 s", "failed transactions during the downtime: 5",
		"acknowledged commits lost: 7 of 900"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	run := &store.Run{ID: "f", Status: s.Status, Summary: s}
	row := csvRow(run, &s, 2, "")
	if len(row) != len(CSVColumns) {
		t.Fatalf("%d cells for %d columns", len(row), len(CSVColumns))
	}
	for col, want := range map[string]string{"failover_downtime_s": "0.35", "failover_acked_lost": "7", "failover_replication": "async"} {
		if i := slices.Index(CSVColumns, col); i < 0 || row[i] != want {
			t.Errorf("CSV %s: %q, want %q", col, row[i], want)
		}
	}
	d := &PlanData{Name: "p", Rows: []PlanRow{{Cell: "c", State: "done", Run: run}, {Cell: "d", State: "pending"}}}
	b.Reset()
	if err := PlanJSON(&b, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"failover_acked_lost": 7`, `"failover_downtime_s": 0.35`, `"failover_replication": "async"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan export lacks %s:\n%s", want, b.String())
		}
	}
	sync := s
	sync.Failover = &metrics.Failover{Replication: "sync", DowntimeS: 0.5}
	b.Reset()
	failoverCompare(&b, []*Group{{Name: "async", Runs: []*store.Run{run}}, {Name: "sync", Runs: []*store.Run{{ID: "g", Summary: sync}}}})
	for _, want := range []string{"acked commits lost", "downtime s", "0.35", "0.5"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, b.String())
		}
	}
}
