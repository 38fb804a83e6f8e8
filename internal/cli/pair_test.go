package cli

import (
	"os"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestPairRefusesStandbyWithTables: --replica slony or londiste with
// --replica-dsn naming a database that has the workload's tables is
// refused before the run, in one line with exit 2, recording nothing; the
// primary's own database is refused too.
func TestPairRefusesStandbyWithTables(t *testing.T) {
	t.Parallel()
	primary, standby := pgtest.DSN(t), pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", primary)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", standby)
	for _, kind := range []string{"slony", "londiste"} {
		results := t.TempDir()
		r := pgarena(t, nil, "run", "tpcb", "-T", "2s", "--dsn", primary, "--replica", kind, "--replica-dsn", standby, "--results", results)
		wantUsage(t, r, "--replica-dsn", "has the tables pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers already")
		if runs, _ := os.ReadDir(results); len(runs) > 0 {
			t.Errorf("--replica %s: a refused run recorded %d entries", kind, len(runs))
		}
		r = pgarena(t, nil, "run", "tpcb", "-T", "2s", "--dsn", primary, "--replica", kind, "--replica-dsn", primary, "--results", results)
		wantUsage(t, r, "--replica-dsn", "the primary's own database")
	}
}
