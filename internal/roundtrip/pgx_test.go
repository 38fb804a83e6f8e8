package roundtrip_test

// What the round trips rely on in pgx's pgconn that pgx's API does not
// promise, each pinned by a test here. A pgx upgrade that changes one fails
// the test that names it.

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/roundtrip"
)

// checkedPgx is the pgx release whose pgconn (pgconn.go) the round trips
// were checked against.
const checkedPgx = "v5.12.0"

// TestCheckedAgainstThisPgx: the linked pgx is the release the round trips
// were checked against. On an upgrade, read pgconn.go again for what the
// tests below cannot see, then set checkedPgx:
//   - receiveMessage acts only on ReadyForQuery (transaction status),
//     ParameterStatus, ErrorResponse (OnPgError; by default a FATAL one
//     closes the connection), NoticeResponse and NotificationResponse; the
//     messages readQuiet skips are none of these;
//   - pgconn reads its socket only through its Frontend's buffer
//     (ReadBufferLen) and the slow-write background reader, which SyncConn
//     stops;
//   - ReceiveMessage with context.Background() watches nothing and arms
//     no timer; Conn returns the net.Conn AfterNetConnect returned.
func TestCheckedAgainstThisPgx(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/jackc/pgx/v5" {
			if f[1] != checkedPgx {
				t.Fatalf("go.mod requires pgx %s; the round trips were checked against %s: see this test's comment", f[1], checkedPgx)
			}
			return
		}
	}
	t.Fatal("pgx not in go.mod")
}

// answerReader is what the round trips look for in pc.Conn() to read in
// netio's buffer (netio's rawConn).
type answerReader interface {
	ReadMore(keep int) ([]byte, error)
	Unread(n int)
}

// TestPgconnConnIsTheDialedConn: pc.Conn() is the connection
// AfterNetConnect returned (netio's raw connection), before and after
// pgconn's own statements; else the round trips would read through pgconn
// (correct, but slower).
func TestPgconnConnIsTheDialedConn(t *testing.T) {
	conn := connect(t, netio.Raw)
	if _, ok := conn.PgConn().Conn().(answerReader); !ok {
		t.Fatalf("pgconn's Conn() is a %T, not netio's raw connection", conn.PgConn().Conn())
	}
	if _, err := conn.Exec(context.Background(), "select 1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := conn.PgConn().Conn().(answerReader); !ok {
		t.Fatalf("after a statement pgconn's Conn() is a %T", conn.PgConn().Conn())
	}
}

// TestPgconnReadsAheadIntoItsBuffer: bytes pgconn read from the socket
// beyond the message it returned stay in its Frontend's buffer, and
// ReadBufferLen counts them: the round trips read the socket themselves
// only when it is 0. Two answers are made to wait in the socket together,
// then pgconn reads the first.
func TestPgconnReadsAheadIntoItsBuffer(t *testing.T) {
	conn := connect(t, netio.Std) // Write sends at once
	pc := conn.PgConn()
	var q roundtrip.Simple
	two := append(append(q.Query(), "select 1\x00"...), 'Q', 0, 0, 0, 0)
	two = append(two, "select 2\x00"...)
	setLen := func(m []byte) { m[1], m[2], m[3], m[4] = 0, 0, 0, byte(len(m)-1) }
	setLen(two[:14])
	setLen(two[14:])
	if _, err := pc.Conn().Write(two); err != nil {
		t.Fatal(err)
	}
	waitIdleAfter(t, pc.PID(), "select 2")
	if n := pc.Frontend().ReadBufferLen(); n != 0 {
		t.Fatalf("ReadBufferLen %d before pgconn read", n)
	}
	readUntilReady(t, pc)
	if n := pc.Frontend().ReadBufferLen(); n == 0 {
		t.Fatal("ReadBufferLen 0 with the second answer read ahead: pgconn reads ahead elsewhere")
	}
	readUntilReady(t, pc)
	if n := pc.Frontend().ReadBufferLen(); n != 0 {
		t.Fatalf("ReadBufferLen %d after both answers", n)
	}
}

// TestPgconnSlowWriteLeavesNoReaderBehind: a write of pgconn's that takes
// longer than its slow-write timer (15 ms) starts its background reader,
// which may still be in a Read of the socket when the statement has
// returned; a round trip then must not read the socket beside it (its
// answer would go to pgconn's reader). The round trip after such a
// statement gets its own answer.
func TestPgconnSlowWriteLeavesNoReaderBehind(t *testing.T) {
	var slow atomic.Bool
	conn := connect(t, netio.Raw, func(c *pgconn.Config) {
		prev := c.AfterNetConnect
		c.AfterNetConnect = func(ctx context.Context, c *pgconn.Config, nc net.Conn) (net.Conn, error) {
			nc, err := prev(ctx, c, nc)
			return &slowWriter{Conn: nc, ar: nc.(answerReader), slow: &slow}, err
		}
	})
	pc := conn.PgConn()
	div := func() error { var x roundtrip.Simple; return x.Exec(pc, []byte("select 1/0")) }
	for i := range 5 {
		slow.Store(true)
		if _, err := conn.Exec(context.Background(), "select 1"); err != nil {
			t.Fatal(err)
		}
		slow.Store(false)
		done := make(chan error, 1)
		go func() { done <- div() }()
		select {
		case err := <-done:
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "22012" {
				t.Fatalf("round %d: round trip after a slow write: %v, want SQLSTATE 22012", i, err)
			}
		case <-time.After(10 * time.Second):
			pc.Conn().SetDeadline(time.Unix(1, 0))
			t.Fatalf("round %d: no answer in 10 s to a round trip after a slow write (pgconn's background reader took it)", i)
		}
	}
}

// slowWriter is netio's raw connection whose Writes take 30 ms while slow
// is set (after writing): pgconn's slow-write timer fires during them.
type slowWriter struct {
	net.Conn
	ar   answerReader
	slow *atomic.Bool
}

func (w *slowWriter) Write(p []byte) (int, error) {
	n, err := w.Conn.Write(p)
	if w.slow.Load() {
		time.Sleep(30 * time.Millisecond) // longer than pgconn's 15 ms: the duration is what is tested
	}
	return n, err
}

func (w *slowWriter) ReadMore(keep int) ([]byte, error) { return w.ar.ReadMore(keep) }
func (w *slowWriter) Unread(n int)                      { w.ar.Unread(n) }

// connect opens a connection to the test database in mode m, closed at the
// end of the test.
func connect(t *testing.T, m netio.Mode, set ...func(*pgconn.Config)) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	netio.Apply(&cfg.Config, m)
	for _, s := range set {
		s(&cfg.Config)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// readUntilReady reads messages through pgconn up to a ReadyForQuery.
func readUntilReady(t *testing.T, pc *pgconn.PgConn) {
	t.Helper()
	for {
		msg, err := pc.ReceiveMessage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return
		}
	}
}

// waitIdleAfter waits (10 s at most) until backend pid is idle after
// running query: its answers are all in the socket.
func waitIdleAfter(t *testing.T, pid uint32, query string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, pgtest.Cluster(t).DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	for {
		var n int
		err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where pid = $1 and state = 'idle' and query = $2", pid, query).Scan(&n)
		if err != nil {
			t.Fatalf("backend %d not seen idle after %q: %v", pid, query, err)
		}
		if n == 1 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
