package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/store"
)

// Every error class has its err_ column, and a row has one field per column.
func TestCSVColumnsCoverEveryClass(t *testing.T) {
	for c := 1; c < pgerr.NumClasses; c++ {
		name := "err_" + pgerr.ErrorClass(c).String()
		if i := slices.Index(CSVColumns, name); i < 0 {
			t.Errorf("no CSV column %s", name)
		}
	}
	var r store.Run
	r.Summary.Errors[pgerr.ClassPreparedStatements] = 7
	row := csvRow(&r, &r.Summary, 0, "")
	if len(row) != len(CSVColumns) {
		t.Fatalf("%d fields for %d columns", len(row), len(CSVColumns))
	}
	if i := slices.Index(CSVColumns, "err_prepared_statements"); row[i] != "7" {
		t.Fatalf("err_prepared_statements is %q", row[i])
	}
}

// TestCSVSafeInSpreadsheet: text cells of both CSV exports that would start
// a formula get a leading ', numbers keep their sign.
func TestCSVSafeInSpreadsheet(t *testing.T) {
	for in, want := range map[string]string{"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")", "+1+cmd": "'+1+cmd",
		"-2+3": "'-2+3", "@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\r=1": "'\r=1", "-1.5": "-1.5", "+3": "+3",
		"-0": "-0", "1e-3": "1e-3", "plain": "plain", "": ""} {
		if got := safeCell(in); got != want {
			t.Errorf("safeCell(%q) = %q, want %q", in, got, want)
		}
	}
	r := &store.Run{ID: "r1", Spec: store.RunSpec{Label: "=1+1", Workload: "tpcb", Params: map[string]string{"x": "y"}}}
	r.Summary.Latency.Avg = -1.5 // a number with a sign
	var b bytes.Buffer
	if err := WriteCSV(&b, []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := rows[1][slices.Index(CSVColumns, "label")]; got != "'=1+1" {
		t.Errorf("label cell %q, want '=1+1", got)
	}
	if got := rows[1][slices.Index(CSVColumns, "lat_avg_ms")]; got != "-1.5" {
		t.Errorf("lat_avg_ms cell %q, want -1.5", got)
	}
	d := &PlanData{Name: "@plan", Rows: []PlanRow{{Cell: "c", CellName: "-cmd|' /C calc'!A0", State: "pending"}}}
	b.Reset()
	if err := PlanCSV(&b, d); err != nil {
		t.Fatal(err)
	}
	if rows, err = csv.NewReader(&b).ReadAll(); err != nil {
		t.Fatal(err)
	}
	if rows[1][0] != "'@plan" || rows[1][3] != "'-cmd|' /C calc'!A0" {
		t.Errorf("plan row %q", rows[1])
	}
}
