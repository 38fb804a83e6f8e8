package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

func replicationSummary(catchUp float64, caught bool) metrics.Summary {
	s := metrics.Summary{RunID: "r", Workload: "tpcb", Clients: 4, DurationS: 100, Transactions: 10000, TPS: 100,
		Status: metrics.StatusComplete}
	s.Replication = &metrics.Replication{Replicas: []metrics.ReplicaLag{{Name: "pglogical", Kind: "pglogical",
		LagMaxS: 12.5, LagP99S: 12, LagEndS: 12.5, CatchUpS: catchUp, CaughtUp: caught}}}
	s.Replication.Finish(s.Transactions, s.DurationS, s.TPS)
	return s
}

// The text summary, the CSV row and the comparison show the sustainable
// rate: 10000 transactions over 100 s of load and 25 s of catch-up is 80
// tps, 0.8 of the raw rate.
func TestReplicationOutputs(t *testing.T) {
	s := replicationSummary(25, true)
	if s.Replication.SustainableTPS != 80 || s.Replication.SustainableRatio != 0.8 {
		t.Fatalf("sustainable %v ratio %v, want 80 and 0.8", s.Replication.SustainableTPS, s.Replication.SustainableRatio)
	}
	var b bytes.Buffer
	SummaryText(&b, &s)
	for _, want := range []string{"sustainable tps = 80.0 (0.800 of tps", "pglogical  pglogical", "12.500", "25.00"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	run := &store.Run{ID: "r", Summary: s}
	row := csvRow(run, &s, 4, "")
	if got := row[slices.Index(CSVColumns, "sustainable_tps")]; got != "80" {
		t.Errorf("CSV sustainable_tps %q", got)
	}
	if got := row[slices.Index(CSVColumns, "catch_up_s")]; got != "25" {
		t.Errorf("CSV catch_up_s %q", got)
	}
	other := replicationSummary(100, false)
	b.Reset()
	SummaryText(&b, &other)
	if !strings.Contains(b.String(), "sustainable tps = <=50.0") || !strings.Contains(b.String(), "(timed out)") {
		t.Errorf("a replica that did not catch up is not shown as such:\n%s", b.String())
	}
	b.Reset()
	replicationCompare(&b, []*Group{{Name: "a", Runs: []*store.Run{run}}, {Name: "b", Runs: []*store.Run{{ID: "o", Summary: other}}}})
	if !strings.Contains(b.String(), "sustainable tps") || !strings.Contains(b.String(), "<=-37.5%") {
		t.Errorf("comparison rows:\n%s", b.String())
	}
}

// TestReplicationNotCaughtUpEverywhere: a replica that timed out and could
// not be read shows as such in the summary, the CSV export, the comparison
// and the plan export (CSV and JSON), and the sustainable rate as an upper
// bound in each.
func TestReplicationNotCaughtUpEverywhere(t *testing.T) {
	s := replicationSummary(100, false)
	s.Replication.Replicas[0].FailedReads, s.Replication.Replicas[0].UnreadableS = 30, 3.2
	var b bytes.Buffer
	SummaryText(&b, &s)
	for _, want := range []string{"caught up", "NO", "3.2", "replication degraded: replica pglogical did not catch up within 100.0 s",
		"could not be read for 3.2 s", "sustainable tps = <=50.0", "an upper bound"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	run := &store.Run{ID: "o", Status: s.Status, Summary: s}
	row := csvRow(run, &s, 4, "")
	for col, want := range map[string]string{"caught_up": "false", "sustainable_upper_bound": "true", "replica_unreadable_s": "3.2", "sustainable_tps": "50"} {
		if i := slices.Index(CSVColumns, col); i < 0 || row[i] != want {
			t.Errorf("CSV %s: %q, want %q", col, row[i], want)
		}
	}
	ok := replicationSummary(25, true)
	if row := csvRow(&store.Run{Summary: ok}, &ok, 4, ""); row[slices.Index(CSVColumns, "caught_up")] != "true" {
		t.Errorf("CSV caught_up of a caught-up run: %q", row[slices.Index(CSVColumns, "caught_up")])
	}
	b.Reset()
	replicationCompare(&b, []*Group{{Name: "a", Runs: []*store.Run{{ID: "r", Summary: ok}}}, {Name: "b", Runs: []*store.Run{run}}})
	for _, want := range []string{"<=50.0", ">=100.0", "runs caught up", "1 of 1", "0 of 1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, b.String())
		}
	}
	d := &PlanData{Name: "p", Rows: []PlanRow{{Cell: "c", State: "done", Run: run}}}
	b.Reset()
	if err := PlanCSV(&b, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "catch_up_s,caught_up,sustainable_tps,sustainable_upper_bound") || !strings.Contains(b.String(), "100.000,false,50.000,true") {
		t.Errorf("plan CSV:\n%s", b.String())
	}
	b.Reset()
	if err := PlanJSON(&b, d); err != nil || !strings.Contains(b.String(), `"caught_up": false`) || !strings.Contains(b.String(), `"sustainable_upper_bound": true`) {
		t.Errorf("plan JSON (%v):\n%s", err, b.String())
	}
}
