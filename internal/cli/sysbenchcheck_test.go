package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestSysbenchCheckAfterInsertAndDelete: check sysbench passes after
// oltp_insert and oltp_delete runs, which add and remove rows: it compares
// with what init loaded (recorded with the load), says the rows differ as
// a note, and the runs draw ids from the loaded size, not from sbtest1's
// rows of the moment. --table-size given asserts the rows: a failure.
func TestSysbenchCheckAfterInsertAndDelete(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	mustRun(t, "init", "sysbench", "--tables", "2", "--table-size", "1000", "--dsn", dsn)
	mustRun(t, "check", "sysbench", "--dsn", dsn)
	r := mustRun(t, "run", "sysbench", "oltp_insert", "-t", "30", "--dsn", dsn, "--results", results)
	r = mustRun(t, "run", "sysbench", "oltp_delete", "-t", "200", "-c", "2", "--dsn", dsn, "--results", results, "--json")
	if !strings.Contains(r.stdout, `table-size: 1000, as loaded`) {
		t.Errorf("oltp_delete after oltp_insert did not take the loaded table size:\n%s", r.stdout)
	}
	r = mustRun(t, "check", "sysbench", "--dsn", dsn)
	if !strings.Contains(r.stdout+r.stderr, "rows differ from the 1000 rows per table of the load") {
		t.Errorf("check did not note the rows that runs changed:\n%s", r)
	}
	r = pgarena(t, nil, "check", "sysbench", "--table-size", "1000", "--dsn", dsn)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "rows differ from --table-size 1000") {
		t.Errorf("check --table-size 1000 after rows changed: want exit %d naming --table-size\n%s", ExitFailed, r)
	}
}

// TestSysbenchQPSIsTPS: sysbench's qps and pgarena's tps share one count
// and one time base (the measured intervals; neither the warm-up nor what
// committed in the drain), so a one-query test's qps is its tps exactly
// and oltp_read_only's is 16 times it (14 reads, BEGIN, COMMIT).
func TestSysbenchQPSIsTPS(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	mustRun(t, "init", "sysbench", "--tables", "1", "--table-size", "1000", "--dsn", dsn)
	for test, per := range map[string]float64{"oltp_point_select": 1, "oltp_read_only": 16} {
		r := mustRun(t, "run", "sysbench", test, "-c", "2", "-T", "2s", "--warmup", "1s", "-P", "0", "--dsn", dsn, "--results", results, "--json")
		var s struct {
			TPS     float64 `json:"tps"`
			Figures []struct {
				Name  string  `json:"name"`
				Value float64 `json:"value"`
			} `json:"figures"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
			t.Fatalf("%s: %v\n%s", test, err, r.stdout)
		}
		qps := math.NaN()
		for _, f := range s.Figures {
			if f.Name == "qps" {
				qps = f.Value
			}
		}
		// Both are rounded to 3 decimals: tps's rounding, times per.
		if s.TPS <= 0 || per == 1 && qps != s.TPS || math.Abs(qps-per*s.TPS) > (per+1)*0.0005 {
			t.Errorf("%s: qps %v, tps %v: want qps %v times tps", test, qps, s.TPS, per)
		}
	}
}
