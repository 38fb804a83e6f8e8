package cli

import (
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
