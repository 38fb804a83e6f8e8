package workload

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// rollbackWait bounds the rollback of EndFailed.
const rollbackWait = 5 * time.Second

// EndFailed leaves conn with no transaction open after a transaction
// failed: it rolls back, and closes the connection if the rollback fails
// (the driver then reconnects). The rollback has its own short deadline,
// so it also runs when ctx was cancelled. Workers call it on any error
// from Do.
func EndFailed(ctx context.Context, conn *pgx.Conn) {
	EndFailedPgConn(ctx, conn.PgConn())
}

// EndFailedPgConn is EndFailed on a pgconn connection (PgConnWorker).
func EndFailedPgConn(ctx context.Context, pc *pgconn.PgConn) {
	if pc.IsClosed() || pc.TxStatus() == 'I' {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackWait)
	defer cancel()
	if err := pc.Exec(rctx, "ROLLBACK").Close(); err != nil || pc.TxStatus() != 'I' {
		_ = pc.Close(rctx)
	}
}
