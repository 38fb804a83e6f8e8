package roundtrip

import (
	"encoding/binary"

	"github.com/jackc/pgx/v5/pgconn"
)

// Simple runs simple-protocol statements whose rows are discarded, in
// one round trip, as Prepared runs prepared ones: it encodes the
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
// The same conditions as Prepared apply (check Usable first); a
// failed statement returns its *pgconn.PgError, an I/O error closes the
// connection. Not safe for concurrent use.
type Simple struct{ buf []byte }

// Exec runs the statements of sql (text without a NUL byte, which the
// server would take for its end).
func (x *Simple) Exec(pc *pgconn.PgConn, sql []byte) error {
	return x.Run(pc, append(x.Query(), sql...))
}

// Query starts a Query message in x's buffer, for a caller that writes
// its statements' text there itself (one copy of the text fewer): append
// the text to it and give it to Run.
func (x *Simple) Query() []byte { return append(x.buf[:0], 'Q', 0, 0, 0, 0) }

// Run ends the Query message q (Query's, with the text appended) and runs
// its statements, as Exec.
//
// Run is small enough to be inlined into its callers (cost 78 of Go's
// 80), so that no frame of its own is on a client's stack under the
// answer's wait (see TestClientStackStaysSmall in internal/session).
func (x *Simple) Run(pc *pgconn.PgConn, q []byte) error {
	x.buf = append(q, 0)
	binary.BigEndian.PutUint32(x.buf[1:], uint32(len(q)))
	return roundTrip(pc, x.buf)
}
