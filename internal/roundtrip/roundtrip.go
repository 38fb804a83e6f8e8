// Package roundtrip runs benchmark statements in one round trip each, on
// the hot path of benchmark clients, behind pgconn's back: Prepared and
// Simple encode their request themselves, write it to the connection's
// socket in one Write and read the answer (through pgconn, or on netio's
// raw connections in netio's own buffer, handing pgconn what it must act
// on). That leans on how pgconn owns its socket and its read buffer, which
// is not part of pgx's API; pgx_test.go pins each such behaviour of the pgx
// release it was checked against, so that a pgx upgrade that changes one
// fails a named test instead of corrupting a run.
package roundtrip

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// roundTrip writes req, whole protocol messages ending in a Sync or a
// Query, in one Write to pc's socket and reads the answer up to
// ReadyForQuery, discarding rows: the first error's *pgconn.PgError, or
// nil. The answer is read by readQuiet where it can be, otherwise (and
// from the first message readQuiet leaves) through pgconn.
//
// readQuiet reads the socket beside pgconn, so pgconn must hold nothing
// read ahead and have no read in progress: SyncConn makes sure (its
// background reader, started by a write of its own slower than 15 ms, may
// still be in a Read; then, or with bytes buffered, SyncConn reads them
// with a Ping first).
func roundTrip(pc *pgconn.PgConn, req []byte) error {
	nc := pc.Conn()
	ar, quiet := nc.(answerReader)
	if quiet {
		if err := pc.SyncConn(context.Background()); err != nil {
			closeBroken(pc)
			return err
		}
	}
	if _, err := nc.Write(req); err != nil {
		closeBroken(pc)
		return err
	}
	if quiet {
		if done, err := readQuiet(pc, ar); done {
			return err
		}
	}
	return receive(pc)
}

// receive reads the rest of an answer through pgconn, up to ReadyForQuery:
// the first error's *pgconn.PgError, or nil.
func receive(pc *pgconn.PgConn) error {
	var failed error
	for {
		msg, err := pc.ReceiveMessage(context.Background())
		if err != nil {
			closeBroken(pc)
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			if failed == nil {
				failed = pgconn.ErrorResponseToPgError(m)
			}
		case *pgproto3.ReadyForQuery:
			return failed
		}
	}
}

// answerReader is a connection whose bytes a round trip can parse in the
// connection's own buffer and give back (netio's raw connections): see
// netio's rawConn.ReadMore and Unread.
type answerReader interface {
	ReadMore(keep int) ([]byte, error)
	Unread(n int)
}

// Ready makes what the round trips on pc's connection need before the
// first: netio's buffer for answers (its ReserveAnswers), made on the
// caller's stack (connecting, shallow) rather than under the first
// statement's wait, where malloc's slow path could outgrow a client's
// 2 KB stack (see workload.SmallStacker).
func Ready(pc *pgconn.PgConn) {
	if r, ok := pc.Conn().(interface{ ReserveAnswers() }); ok {
		r.ReserveAnswers()
	}
}

// maxQuiet bounds the messages readQuiet reads itself (their length
// field); a longer one is left to pgconn, so that the connection's buffer
// stays small (netio grows it to 8 KB at most for these).
const maxQuiet = 4096 - 1

// readQuiet reads the answer to a round trip's request from ar, which
// holds nothing of it yet (pgconn's buffer is empty, no read of its own
// in progress), as long as its messages are ones pgconn reads without
// acting on them: the acknowledgements, row descriptions, rows and
// command tags of statements whose rows are discarded, and a ReadyForQuery that ends the answer and
// leaves the transaction status as pgconn has it. It skips those without
// decoding them. Anything else (an error, a notice, a parameter status, a
// notification, a ReadyForQuery that changes the status or with bytes
// after it, a message longer than maxQuiet) is given back with what
// follows it, and done is false: pgconn reads the rest of the answer, and
// does with those messages what it always does. That keeps pgconn's
// state (transaction status, parameters, a FATAL error's closing) as if it
// had read every message, and costs the common answer none of pgconn's
// layers (Frontend, chunk reader, background reader) or decoding
// (PostgreSQL protocol, "Message Formats").
//
//go:noinline
func readQuiet(pc *pgconn.PgConn, ar answerReader) (done bool, err error) {
	status := pc.TxStatus()
	in, err := ar.ReadMore(0)
	for {
		if err != nil {
			closeBroken(pc)
			return true, err
		}
		p := 0
		for len(in)-p >= 5 {
			n := int(binary.BigEndian.Uint32(in[p+1:]))
			if n < 4 || n > maxQuiet {
				ar.Unread(len(in) - p) // pgconn's to judge
				return false, nil
			}
			end := p + 1 + n
			if end > len(in) {
				break
			}
			switch in[p] {
			case '1', '2', '3', 'C', 'D', 'T', 'n', 'I', 's', 't':
				p = end
				continue
			case 'Z':
				if n == 5 && in[p+5] == status && end == len(in) {
					return true, nil
				}
			}
			ar.Unread(len(in) - p)
			return false, nil
		}
		in, err = ar.ReadMore(len(in) - p)
	}
}

// closeBroken closes a connection whose socket failed mid-statement (its
// protocol state is unknown); the deadline bounds the Terminate pgconn
// tries to send.
func closeBroken(pc *pgconn.PgConn) {
	if pc.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pc.Close(ctx)
}
