package tpcb

import (
	"context"
	"fmt"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// SkippedUpdatesError is returned by Check when the database is consistent
// except that the tellers' and branches' balances (which agree with each
// other) differ from the history. That is the expected state after runs of
// the simple-update script (-N, "skip some updates"): pgbench's
// simple-update updates pgbench_accounts and inserts into pgbench_history
// but, unlike tpcb-like, does not update pgbench_tellers or
// pgbench_branches. Find it with errors.As.
//
// Expected is true when the workload checking was itself configured with
// -N (or -b simple-update), i.e. the caller declared that simple-update
// runs happened: Check then returns the error in a workload.CheckNote (the
// CLI shows it as a note), and as a failure otherwise.
type SkippedUpdatesError struct {
	Tellers  int64 // sum(pgbench_tellers.tbalance) = sum(pgbench_branches.bbalance)
	Accounts int64 // sum(pgbench_accounts.abalance) = sum(pgbench_history.delta)
	Expected bool
}

func (e *SkippedUpdatesError) Error() string {
	return fmt.Sprintf("sum(tbalance) = sum(bbalance) = %d differs from sum(abalance) = sum(delta) = %d "+
		"(expected after simple-update (-N) runs, which do not update tellers and branches)", e.Tellers, e.Accounts)
}

// Check implements workload.Checker. It verifies the row counts for the
// workload's scale (the database's after Prepare: 1 branch, 10 tellers and
// 100000 accounts per unit) and that balances add up:
// sum(abalance) = sum(delta) and sum(tbalance) = sum(bbalance) always, and
// sum(tbalance) = sum(delta) unless simple-update ran, which is reported as
// a *SkippedUpdatesError. The sums are read by one statement, so from one
// snapshot.
func (w *Workload) Check(ctx context.Context, conn pgtext.Querier) error {
	var branches, tellers, accounts, abal, tbal, bbal, delta int64
	err := conn.QueryRow(ctx, `select
		(select count(*) from pgbench_branches),
		(select count(*) from pgbench_tellers),
		(select count(*) from pgbench_accounts),
		(select coalesce(sum(abalance), 0) from pgbench_accounts),
		(select coalesce(sum(tbalance), 0) from pgbench_tellers),
		(select coalesce(sum(bbalance), 0) from pgbench_branches),
		(select coalesce(sum(delta), 0) from pgbench_history)`).
		Scan(&branches, &tellers, &accounts, &abal, &tbal, &bbal, &delta)
	if err != nil {
		return fmt.Errorf("tpcb check: %w", err)
	}
	scale := int64(w.scale)
	for _, c := range []struct {
		table     string
		got, want int64
	}{
		{"pgbench_branches", branches, branchesPerScale * scale},
		{"pgbench_tellers", tellers, tellersPerScale * scale},
		{"pgbench_accounts", accounts, accountsPerScale * scale},
	} {
		if c.got != c.want {
			return fmt.Errorf("tpcb check: %s has %d rows, want %d for scale %d", c.table, c.got, c.want, scale)
		}
	}
	if abal != delta {
		return fmt.Errorf("tpcb check: sum(pgbench_accounts.abalance) = %d differs from sum(pgbench_history.delta) = %d", abal, delta)
	}
	if tbal != bbal {
		return fmt.Errorf("tpcb check: sum(pgbench_tellers.tbalance) = %d differs from sum(pgbench_branches.bbalance) = %d", tbal, bbal)
	}
	if tbal != delta {
		e := &SkippedUpdatesError{Tellers: tbal, Accounts: abal, Expected: w.usesSimpleUpdate()}
		if e.Expected {
			return &workload.CheckNote{Err: e}
		}
		return e
	}
	return nil
}
