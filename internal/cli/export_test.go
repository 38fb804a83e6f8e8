package cli

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/golden"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/report/reporttest"
)

// fixtures writes reporttest.Standard runs into a fresh results directory
// and returns it with the run ids, oldest first.
func fixtures(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	ids, err := reporttest.Write(dir, reporttest.Standard())
	if err != nil {
		t.Fatal(err)
	}
	return dir, ids
}

func TestExportCSVGolden(t *testing.T) {
	t.Parallel()
	dir, ids := fixtures(t)
	r := mustRun(t, "export", "--results", dir, "--format", "csv")
	golden.Check(t, "export.csv.golden", []byte(r.stdout))
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(ids)+1 {
		t.Fatalf("%d CSV records, want a header and %d runs", len(recs), len(ids))
	}
	if strings.Join(recs[0], ",") != strings.Join(report.CSVColumns, ",") {
		t.Errorf("header %v", recs[0])
	}
	for i, rec := range recs[1:] {
		if rec[0] != ids[i] {
			t.Errorf("row %d is run %s, want %s (oldest first)", i, rec[0], ids[i])
		}
		if len(rec) != len(report.CSVColumns) {
			t.Errorf("row %d has %d fields", i, len(rec))
		}
	}
	// Selection: a label glob and --since.
	r = mustRun(t, "export", "--results", dir, "label~pool-b")
	if n := strings.Count(r.stdout, "\n"); n != 4 {
		t.Errorf("label~pool-b: %d lines, want header + 3:\n%s", n, r.stdout)
	}
	r = mustRun(t, "export", "--results", dir, "--since", "2026-11-22T03:22:00Z")
	if n := strings.Count(r.stdout, "\n"); n != 3 {
		t.Errorf("--since: %d lines, want header + 2:\n%s", n, r.stdout)
	}
	wantUsage(t, pgarena(t, nil, "export", "--results", dir, "--format", "xml"), "--format")
	wantUsage(t, pgarena(t, nil, "export", "--results", dir, "nosuchrun"), "nosuchrun")
}

func TestExportJSONGolden(t *testing.T) {
	t.Parallel()
	dir, ids := fixtures(t)
	r := mustRun(t, "export", "--results", dir, "--format", "json", ids[0])
	golden.Check(t, "export.json.golden", []byte(r.stdout))
	var e struct {
		ID         string
		Status     string
		Summary    metrics.Summary
		Histograms map[string]string
		Intervals  []metrics.Interval
	}
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil {
		t.Fatal(err)
	}
	if e.ID != ids[0] || e.Status != "complete" || len(e.Intervals) != 12 {
		t.Errorf("id %s status %s intervals %d", e.ID, e.Status, len(e.Intervals))
	}
	h, err := metrics.DecodeHistogram(e.Histograms["a"])
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != e.Summary.Tx[0].Transactions || h.TotalCount() == 0 {
		t.Errorf("histogram a counts %d, summary %d", h.TotalCount(), e.Summary.Tx[0].Transactions)
	}
	// Several runs: one object after another.
	r = mustRun(t, "export", "--results", dir, "--format", "json", "last", "last~1")
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var got []string
	for dec.More() {
		var x struct{ ID, Status string }
		if err := dec.Decode(&x); err != nil {
			t.Fatal(err)
		}
		got = append(got, x.ID+" "+x.Status)
	}
	want := []string{ids[len(ids)-1] + " complete", ids[len(ids)-2] + " interrupted"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestExportSweep: a sweep exports one CSV row per step, each with its own
// clients and numbers, and its JSON summary carries every step in full.
func TestExportSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids, err := reporttest.Write(dir, []reporttest.Fixture{reporttest.Sweep()})
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, "export", "--results", dir, "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	if len(recs) != 4 {
		t.Fatalf("%d CSV records, want a header and 3 steps:\n%s", len(recs), r.stdout)
	}
	prevTPS := ""
	for i, rec := range recs[1:] {
		if rec[col["step"]] != []string{"1", "2", "3"}[i] || rec[col["clients"]] != []string{"2", "4", "8"}[i] {
			t.Errorf("row %d: step %s clients %s", i, rec[col["step"]], rec[col["clients"]])
		}
		if rec[col["tps"]] == prevTPS {
			t.Errorf("row %d has the tps of the row before (%s): a blend?", i, prevTPS)
		}
		prevTPS = rec[col["tps"]]
	}
	r = mustRun(t, "export", "--results", dir, "--format", "json", ids[0])
	var e struct{ Summary metrics.Summary }
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Summary.Steps) != 3 || len(e.Summary.Steps[2].Tx) != 2 || e.Summary.Steps[2].Clients != 8 {
		t.Errorf("JSON steps: %+v", e.Summary.Steps)
	}
}
