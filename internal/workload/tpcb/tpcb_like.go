package tpcb

import "context"

// tpcbLike is pgbench's builtin "tpcb-like" script:
//
//	\set aid random(1, 100000 * :scale)
//	\set bid random(1, 1 * :scale)
//	\set tid random(1, 10 * :scale)
//	\set delta random(-5000, 5000)
//	BEGIN;
//	UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
//	SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
//	UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
//	UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
//	INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
//	END;
//
// Note that, as in pgbench, the teller need not belong to the branch.
func tpcbLike(ctx context.Context, w *worker) error {
	w.drawAll()
	for _, s := range [...]*statement{stmtBegin, stmtUpdateAccounts, stmtSelectAccounts, stmtUpdateTellers, stmtUpdateBranches, stmtInsertHistory, stmtEnd} {
		if err := w.exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// drawAll sets the four variables of the tpcb-like and simple-update
// scripts, in their order.
func (w *worker) drawAll() {
	w.draw(varAid, 1, accountsPerScale*w.scale)
	w.draw(varBid, 1, branchesPerScale*w.scale)
	w.draw(varTid, 1, tellersPerScale*w.scale)
	w.draw(varDelta, -5000, 5000)
}
