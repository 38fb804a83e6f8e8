package tpcb

import "context"

// simpleUpdate is pgbench's builtin "simple-update" script (-N, "skip
// some updates"): tpcb-like without the updates of pgbench_tellers and
// pgbench_branches, so after it sum(tbalance) = sum(bbalance) no longer
// equals sum(pgbench_history.delta) (see SkippedUpdatesError).
//
//	\set aid random(1, 100000 * :scale)
//	\set bid random(1, 1 * :scale)
//	\set tid random(1, 10 * :scale)
//	\set delta random(-5000, 5000)
//	BEGIN;
//	UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
//	SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
//	INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
//	END;
func simpleUpdate(ctx context.Context, w *worker) error {
	w.drawAll()
	for _, s := range [...]*statement{stmtBegin, stmtUpdateAccounts, stmtSelectAccounts, stmtInsertHistory, stmtEnd} {
		if err := w.exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
