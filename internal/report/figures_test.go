package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// figureRun is a run of fixedIntervals with the given run-wide figures.
func figureRun(id string, figs ...metrics.Figure) *store.Run {
	ivs := fixedIntervals()
	var acc metrics.Accumulator
	for _, iv := range ivs {
		acc.Add(iv)
	}
	s := metrics.Summary{RunID: id, Status: metrics.StatusComplete, Workload: "tpcc", Figures: figs}
	acc.Fill(&s)
	return &store.Run{ID: id, Status: metrics.StatusComplete, Spec: store.RunSpec{ID: id, Workload: "tpcc"}, Summary: s, Intervals: ivs}
}

// TestCSVFigures: the CSV export has nopm and tpm columns, filled for runs
// with those figures and empty for others.
func TestCSVFigures(t *testing.T) {
	var b bytes.Buffer
	runs := []*store.Run{
		figureRun("a", metrics.Figure{Name: "nopm", Value: 2970.5}, metrics.Figure{Name: "tpm", Value: 6600},
			metrics.Figure{Name: "nopm", Value: 1, Tx: "new_order"}),
		figureRun("b"),
	}
	if err := WriteCSV(&b, runs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	if got := [2]string{recs[1][col["nopm"]], recs[1][col["tpm"]]}; got != [2]string{"2970.5", "6600"} {
		t.Errorf("nopm, tpm of a run with figures = %v", got)
	}
	if got := [2]string{recs[2][col["nopm"]], recs[2][col["tpm"]]}; got != [2]string{"", ""} {
		t.Errorf("nopm, tpm of a run without figures = %v", got)
	}
}

// TestCompareNOPM: runs that all have NOPM are compared on it (a row, and
// a verdict with --metric nopm); when one lacks it, there is no row and no
// verdict on it.
func TestCompareNOPM(t *testing.T) {
	m, ok := MetricByKey("nopm")
	if !ok {
		t.Fatal("no nopm metric")
	}
	a := &Group{Name: "A", Runs: []*store.Run{figureRun("a", metrics.Figure{Name: "nopm", Value: 3000})}}
	b := &Group{Name: "B", Runs: []*store.Run{figureRun("b", metrics.Figure{Name: "nopm", Value: 3300})}}
	var out bytes.Buffer
	CompareText(&out, []*Group{a, b}, m)
	if s := out.String(); !strings.Contains(s, "nopm") || !strings.Contains(s, "+10.0%") || !strings.Contains(s, "verdict: B") {
		t.Errorf("comparison on nopm:\n%s", s)
	}
	c := &Group{Name: "C", Runs: []*store.Run{figureRun("c")}}
	out.Reset()
	CompareText(&out, []*Group{a, c}, m)
	s := out.String()
	if !strings.Contains(s, "verdict: none on nopm: not every run has it") {
		t.Errorf("comparison on nopm with a run without it:\n%s", s)
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "nopm") {
			t.Errorf("a nopm row for a run without it: %q", line)
		}
	}
}
