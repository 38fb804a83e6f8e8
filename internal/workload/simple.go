package workload

import (
	"encoding/binary"

	"github.com/jackc/pgx/v5/pgconn"
)

// SimpleExec runs simple-protocol statements whose rows are discarded, in
// one round trip, as PreparedExec runs prepared ones: it encodes the
// Query message into a buffer it reuses, writes it to the connection's
// socket in one Write and reads the answer up to ReadyForQuery through
// PgConn.ReceiveMessage (pgconn still handles every message: the
// transaction status, ParameterStatus, notices, a FATAL error closing the
// connection). It leaves out what PgConn.Exec adds for a general caller:
// a MultiResultReader and ResultReader decoding each result, the context
// watcher, and the slow-write timer armed and stopped around every flush.
// A query holding several statements runs them all; the first failure is
// returned.
//
// The same conditions as PreparedExec apply (check Usable first); a
// failed statement returns its *pgconn.PgError, an I/O error closes the
// connection. Not safe for concurrent use.
type SimpleExec struct{ buf []byte }

// Exec runs the statements of sql (text without a NUL byte, which the
// server would take for its end).
func (x *SimpleExec) Exec(pc *pgconn.PgConn, sql []byte) error {
	b := append(x.buf[:0], 'Q', 0, 0, 0, 0)
	b = append(b, sql...)
	b = append(b, 0)
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
	x.buf = b
	return roundTrip(pc, b)
}
