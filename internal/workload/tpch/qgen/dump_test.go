package qgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestWriteValidationSQL writes the 22 validation queries at SF
// $PGARENA_TPCH_SQL_SF to q1.sql..q22.sql in $PGARENA_TPCH_SQL_OUT, for
// bench/tpch-answers.py (which runs this text in DuckDB). Skipped unless
// both are set.
func TestWriteValidationSQL(t *testing.T) {
	dir, sfText := os.Getenv("PGARENA_TPCH_SQL_OUT"), os.Getenv("PGARENA_TPCH_SQL_SF")
	if dir == "" || sfText == "" {
		t.Skip("set PGARENA_TPCH_SQL_OUT and PGARENA_TPCH_SQL_SF to write the validation queries")
	}
	sf, err := strconv.ParseFloat(sfText, 64)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= NumQueries; n++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("q%d.sql", n)), []byte(Validation(n, sf).SQL+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
