package report

import (
	"slices"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// Every error class has its err_ column, and a row has one field per column.
func TestCSVColumnsCoverEveryClass(t *testing.T) {
	for c := 1; c < metrics.NumClasses; c++ {
		name := "err_" + metrics.ErrorClass(c).String()
		if i := slices.Index(CSVColumns, name); i < 0 {
			t.Errorf("no CSV column %s", name)
		}
	}
	var r store.Run
	r.Summary.Errors[metrics.ClassPreparedStatements] = 7
	row := csvRow(&r, &r.Summary, 0, "")
	if len(row) != len(CSVColumns) {
		t.Fatalf("%d fields for %d columns", len(row), len(CSVColumns))
	}
	if i := slices.Index(CSVColumns, "err_prepared_statements"); row[i] != "7" {
		t.Fatalf("err_prepared_statements is %q", row[i])
	}
}
