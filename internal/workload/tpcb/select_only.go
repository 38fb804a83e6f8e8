package tpcb

import "context"

// selectOnly is pgbench's builtin "select-only" script (-S), one statement
// outside an explicit transaction:
//
//	\set aid random(1, 100000 * :scale)
//	SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
func selectOnly(ctx context.Context, w *worker) error {
	w.draw(varAid, 1, accountsPerScale*w.scale)
	return w.exec(ctx, stmtSelectAccounts)
}
