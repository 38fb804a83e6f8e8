package roundtrip

import (
	"context"
	"encoding/binary"

	"github.com/jackc/pgx/v5/pgconn"
)

// Prepared runs a prepared statement in one round trip and discards
// its rows, for the hot path of benchmark clients: it encodes
// Bind/Execute/Sync itself (the statement's name and result formats once,
// the parameters per call) into a buffer it reuses, writes them to the
// connection's socket in one Write, and reads the answer through
// PgConn.ReceiveMessage, so pgconn still handles every message (the
// transaction status of ReadyForQuery, ParameterStatus, notices, a FATAL
// error closing the connection). What it leaves out of PgConn.ExecPrepared
// is per-statement machinery a benchmark client does not need: the
// Describe (the caller knows the statement), a ResultReader, and the
// slow-write timer pgconn arms and stops around every flush (requests here
// are a few hundred bytes, far below a socket's buffer).
//
// Use it only on an idle connection with an uncancellable context (the
// caller checks Usable): cancellation then comes through the socket's
// deadline, as the driver interrupts statements. A failed statement
// returns its *pgconn.PgError (SQLSTATE kept); an I/O error closes the
// connection, as pgconn does. Not safe for concurrent use.
type Prepared struct {
	head []byte // 'B', length placeholder, portal "", name, no parameter formats
	tail []byte // result formats, then Execute and Sync
	buf  []byte
}

// NewPrepared returns the executor of the statement prepared under
// name, asking for its results in resultFormats (nil: all text).
func NewPrepared(name string, resultFormats []int16) *Prepared {
	head := append([]byte{'B', 0, 0, 0, 0, 0}, name...)
	head = append(head, 0, 0, 0) // name's terminator; 0 parameter format codes: all text
	var tail []byte
	tail = binary.BigEndian.AppendUint16(tail, uint16(len(resultFormats)))
	for _, f := range resultFormats {
		tail = binary.BigEndian.AppendUint16(tail, uint16(f))
	}
	tail = append(tail, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) // Execute: unnamed portal, all rows
	tail = append(tail, 'S', 0, 0, 0, 4)                // Sync
	// head and tail in one allocation: one cache line for both, per call
	m := append(head[:len(head):len(head)], tail...)
	return &Prepared{head: m[:len(head):len(head)], tail: m[len(head):], buf: make([]byte, 0, 128)}
}

// Usable tells whether Exec may run on pc under ctx: ctx cannot be
// cancelled (pgconn would watch it) and pc is idle.
func Usable(ctx context.Context, pc *pgconn.PgConn) bool {
	return ctx.Done() == nil && !pc.IsBusy() && !pc.IsClosed()
}

// Exec runs the statement with params (text; nil is NULL) and reads its
// answer up to ReadyForQuery.
func (p *Prepared) Exec(pc *pgconn.PgConn, params [][]byte) error {
	b := append(p.buf[:0], p.head...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(params)))
	for _, v := range params {
		if v == nil {
			b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	b = append(b, p.tail...)
	bindEnd := len(b) - 15 // Execute (10 bytes) and Sync (5) follow Bind
	binary.BigEndian.PutUint32(b[1:], uint32(bindEnd-1))
	p.buf = b
	return roundTrip(pc, b)
}
