//go:build linux

package netio

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// transports are the two kinds of socket a target is reached by.
var transports = []string{"unix", "tcp"}

// connect opens a pgx connection in mode m over the given transport.
func connect(t *testing.T, dsn, transport string, m Mode) *pgx.Conn {
	t.Helper()
	return connectHold(t, dsn, transport, m, nil)
}

// connectHold is connect with the waits of h for a Raw connection.
func connectHold(t *testing.T, dsn, transport string, m Mode, h *Hold) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if transport == "tcp" {
		cfg.Host = "127.0.0.1"
	}
	cfg.ConnectTimeout = 10 * time.Second
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	ApplyHold(&cfg.Config, m, h)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect over %s: %v", transport, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// modeOf tells which mode a connection's net.Conn is in.
func modeOf(conn *pgx.Conn) Mode {
	switch conn.PgConn().Conn().(type) {
	case *blockingConn:
		return Blocking
	case *rawConn:
		return Raw
	}
	return Std
}

// wrappers are the modes that wrap the socket, with their wrap function.
var wrappers = []struct {
	mode Mode
	wrap func(net.Conn) net.Conn
}{{Raw, WrapRaw}, {Blocking, Wrap}}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Default, "std": Std, "raw": Raw, "blocking": Blocking} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("epoll"); err == nil || !strings.Contains(err.Error(), "raw, std or blocking") {
		t.Errorf("ParseMode(epoll) = %v, want an error naming the choices", err)
	}
}

func TestRoundTrips(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	for _, tr := range transports {
		for _, m := range []Mode{Raw, Blocking, Std} {
			t.Run(tr+"/"+string(m), func(t *testing.T) {
				conn := connect(t, dsn, tr, m)
				if got := modeOf(conn); got != m {
					t.Fatalf("connection in mode %s, want %s", got, m)
				}
				for i := range 2000 {
					var got int
					if err := conn.QueryRow(ctx, "select $1::int + 1", i).Scan(&got); err != nil {
						t.Fatal(err)
					}
					if got != i+1 {
						t.Fatalf("got %d, want %d", got, i+1)
					}
				}
				// Larger than socket buffers both ways: partial reads and
				// writes, pgconn's background reader during a slow write.
				big := strings.Repeat("x", 4<<20)
				var n int
				if err := conn.QueryRow(ctx, "select length('"+big+"')").Scan(&n); err != nil || n != len(big) {
					t.Fatalf("big write: %d, %v", n, err)
				}
				var s string
				if err := conn.QueryRow(ctx, "select repeat('y', 8000000)").Scan(&s); err != nil || len(s) != 8000000 {
					t.Fatalf("big read: %d, %v", len(s), err)
				}
				// Many rows, many small reads.
				rows, _ := conn.Query(ctx, "select g from generate_series(1, 100000) g")
				sum := 0
				for rows.Next() {
					var v int
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
					sum += v
				}
				if err := rows.Err(); err != nil || sum != 100000*100001/2 {
					t.Fatalf("rows: sum %d, %v", sum, err)
				}
			})
		}
	}
}

// eachMode runs f for every wrapping mode and transport.
func eachMode(t *testing.T, f func(t *testing.T, m Mode, transport string)) {
	for _, w := range wrappers {
		for _, tr := range transports {
			t.Run(string(w.mode)+"/"+tr, func(t *testing.T) { f(t, w.mode, tr) })
		}
	}
}

// TestManyClients runs concurrent clients, more than GOMAXPROCS, as a run
// does.
func TestManyClients(t *testing.T) {
	dsn := pgtest.DSN(t)
	eachMode(t, func(t *testing.T, m Mode, tr string) {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			conn := connect(t, dsn, tr, m)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 300 {
					if _, err := conn.Exec(context.Background(), "select 1"); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// statementLength is how long the statements that tests interrupt (pg_sleep(10)) would
// run if nothing interrupted them.
const statementLength = 10 * time.Second

// waitSleeping waits until the backend pid runs pg_sleep, so its client has
// sent the statement and waits for the result (no guess of how long that
// takes on a loaded machine).
func waitSleeping(t *testing.T, admin *pgx.Conn, pid uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		var n int
		err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where pid = $1 and wait_event = 'PgSleep'", pid).Scan(&n)
		if err != nil {
			t.Fatalf("backend %d not seen in pg_sleep: %v", pid, err)
		}
		if n == 1 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone waits until the backend pid has exited, so the server's last
// message and its close are on the way to the client.
func waitGone(t *testing.T, admin *pgx.Conn, pid uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		var n int
		err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where pid = $1", pid).Scan(&n)
		if err != nil {
			t.Fatalf("backend %d still there: %v", pid, err)
		}
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestInterruptBlockedRead is how a run ends statements in flight: a
// deadline in the past, set from another goroutine, on the connection's
// net.Conn.
func TestInterruptBlockedRead(t *testing.T) {
	dsn := pgtest.DSN(t)
	eachMode(t, func(t *testing.T, m Mode, tr string) {
		admin := connect(t, dsn, tr, Std)
		conn := connect(t, dsn, tr, m)
		nc := conn.PgConn().Conn()
		done := make(chan error, 1)
		go func() {
			_, err := conn.Exec(context.Background(), "select pg_sleep(10)")
			done <- err
		}()
		waitSleeping(t, admin, conn.PgConn().PID())
		if err := nc.SetDeadline(time.Unix(1, 0)); err != nil {
			select {
			case xerr := <-done:
				t.Fatalf("the statement ended before the deadline was set (%v): %v", xerr, err)
			default:
				t.Fatal(err)
			}
		}
		// The deadline error, and well before the statement's own end,
		// show the deadline ended it. How soon is not asserted: on two
		// loaded cores under -race a wake-up can take long, and no bound
		// short enough to mean anything is safe from that.
		select {
		case err := <-done:
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("error = %v, want a deadline error", err)
			}
		case <-time.After(statementLength / 2):
			t.Fatalf("statement not interrupted within %s", statementLength/2)
		}
		if !conn.IsClosed() {
			t.Error("connection still open after an interrupted statement")
		}
		// Close of the interrupted connection has nothing to wait for:
		// it returns before its context's deadline (which would mean it
		// waited on the socket).
		ctx, cancel := context.WithTimeout(context.Background(), statementLength/2)
		defer cancel()
		conn.Close(ctx)
		if ctx.Err() != nil {
			t.Errorf("Close waited %s, for its context's deadline", statementLength/2)
		}
	})
}

// TestServerTerminates: the backend is terminated while a statement runs,
// or while the connection is idle.
func TestServerTerminates(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	eachMode(t, func(t *testing.T, m Mode, tr string) {
		admin := connect(t, dsn, tr, Std)
		terminate := func(conn *pgx.Conn) {
			t.Helper()
			if _, err := admin.Exec(ctx, "select pg_terminate_backend($1)", conn.PgConn().PID()); err != nil {
				t.Fatal(err)
			}
		}

		busy := connect(t, dsn, tr, m)
		done := make(chan error, 1)
		go func() {
			_, err := busy.Exec(ctx, "select pg_sleep(10)")
			done <- err
		}()
		waitSleeping(t, admin, busy.PgConn().PID())
		terminate(busy)
		// The error's class, before the statement's own end, shows the
		// termination ended it (how soon is not asserted: see
		// TestInterruptBlockedRead).
		select {
		case err := <-done:
			if c := pgerr.Classify(err); c != pgerr.ClassAdminShutdown && c != pgerr.ClassConnectionLost {
				t.Errorf("busy: error %v classified %s", err, c)
			}
		case <-time.After(statementLength / 2):
			t.Fatalf("no error within %s of the backend's termination", statementLength/2)
		}

		idle := connect(t, dsn, tr, m)
		terminate(idle)
		waitGone(t, admin, idle.PgConn().PID())
		var err error
		for range 3 { // the first query may still be written before the close is seen
			if _, err = idle.Exec(ctx, "select 1"); err != nil {
				break
			}
		}
		if c := pgerr.Classify(err); c != pgerr.ClassAdminShutdown && c != pgerr.ClassConnectionLost {
			t.Errorf("idle: error %v classified %s", err, c)
		}
	})
}

// TestConnectTimeout: the startup path honours the connect timeout (a
// server that accepts and never answers).
func TestConnectTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	for _, w := range wrappers {
		t.Run(string(w.mode), func(t *testing.T) {
			cfg, err := pgx.ParseConfig("postgres://u@" + ln.Addr().String() + "/db?sslmode=disable&connect_timeout=1")
			if err != nil {
				t.Fatal(err)
			}
			Apply(&cfg.Config, w.mode)
			start := time.Now()
			_, err = pgx.ConnectConfig(context.Background(), cfg)
			if err == nil {
				t.Fatal("connected to a silent server")
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("connect gave up after %s, want about 1s", d)
			}
		})
	}
}

// TestApplyChains: an AfterNetConnect hook already configured still runs,
// before the wrapping.
func TestApplyChains(t *testing.T) {
	dsn := pgtest.DSN(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	called := false
	cfg.AfterNetConnect = func(ctx context.Context, c *pgconn.Config, nc net.Conn) (net.Conn, error) {
		called = true
		return nc, nil
	}
	Apply(&cfg.Config, Raw)
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if !called || modeOf(conn) != Raw {
		t.Errorf("earlier hook called: %v; mode %s", called, modeOf(conn))
	}
}

// pair returns both ends of a fresh connection over network ("tcp" or
// "unix"): the client end wrapped with wrap, the server end plain.
func pair(t *testing.T, network string, wrap func(net.Conn) net.Conn) (net.Conn, net.Conn) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	nc, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { srv.Close() })
	c := wrap(nc)
	if c == nc {
		t.Fatalf("%T was not wrapped", nc)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv
}

// each runs f on a fresh wrapped connection of every mode and transport.
func each(t *testing.T, f func(t *testing.T, m Mode, c, srv net.Conn)) {
	for _, w := range wrappers {
		for _, network := range transports {
			t.Run(string(w.mode)+"/"+network, func(t *testing.T) {
				c, srv := pair(t, network, w.wrap)
				f(t, w.mode, c, srv)
			})
		}
	}
}

// within fails the test if f does not return within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }() // also when f calls t.Fatal
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %s", what, d)
	}
}

func TestSocketIO(t *testing.T) {
	each(t, func(t *testing.T, m Mode, c, srv net.Conn) {
		go func() { io.Copy(srv, srv) }() // echo
		msg := []byte("hello")
		if n, err := c.Write(msg); n != len(msg) || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
		buf := make([]byte, 16)
		n, err := io.ReadFull(c, buf[:len(msg)])
		if err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("read: %q, %v", buf[:n], err)
		}
		if n, err := c.Read(nil); n != 0 || err != nil {
			t.Errorf("empty read: %d, %v", n, err)
		}
		if c.LocalAddr() == nil || c.RemoteAddr() == nil {
			t.Error("no addresses")
		}
	})
}

func TestPeerCloses(t *testing.T) {
	each(t, func(t *testing.T, m Mode, c, srv net.Conn) {
		go func() {
			time.Sleep(100 * time.Millisecond)
			srv.Close()
		}()
		buf := make([]byte, 16)
		var err error
		within(t, 2*time.Second, "read of a closed peer", func() { _, err = c.Read(buf) })
		if err != io.EOF {
			t.Errorf("read after the peer closed: %v, want EOF", err)
		}
		// Writes to a closed peer fail (EPIPE or ECONNRESET; the first may
		// still be accepted by the kernel), without a SIGPIPE.
		within(t, 2*time.Second, "writes to a closed peer", func() {
			for range 100 {
				if _, err = c.Write(make([]byte, 1<<16)); err != nil {
					break
				}
			}
		})
		if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("write after the peer closed: %v, want EPIPE or ECONNRESET", err)
		}
		if c := pgerr.Classify(err); c != pgerr.ClassConnectionLost {
			t.Errorf("write error classified %s, want connection_lost", c)
		}
	})
}

// TestPeerResets: unread data at the peer's close makes it reset the
// connection (TCP): ECONNRESET, connection_lost.
func TestPeerResets(t *testing.T) {
	for _, w := range wrappers {
		t.Run(string(w.mode), func(t *testing.T) {
			c, srv := pair(t, "tcp", w.wrap)
			if _, err := c.Write([]byte("unread")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			srv.(*net.TCPConn).SetLinger(0)
			srv.Close()
			var err error
			within(t, 2*time.Second, "read of a reset connection", func() { _, err = c.Read(make([]byte, 8)) })
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("read: %v, want ECONNRESET", err)
			}
			if c := pgerr.Classify(err); c != pgerr.ClassConnectionLost {
				t.Errorf("classified %s, want connection_lost", c)
			}
		})
	}
}

func TestDeadlineInterruptsRead(t *testing.T) {
	each(t, func(t *testing.T, m Mode, c, srv net.Conn) {
		go func() {
			time.Sleep(200 * time.Millisecond)
			c.SetDeadline(time.Unix(1, 0))
		}()
		var err error
		within(t, 2*time.Second, "blocked read", func() { _, err = c.Read(make([]byte, 8)) })
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read: %v, want a deadline error", err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%v is not a net.Error timeout", err)
		}
		c.SetDeadline(time.Time{})
		_, err = c.Write([]byte("x"))
		if m == Blocking {
			// The socket was shut down to interrupt the read: the
			// connection is over, even with the deadline cleared.
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("write after the interrupt: %v, want net.ErrClosed", err)
			}
		} else if err != nil {
			t.Errorf("write after the deadline was cleared: %v", err)
		}
	})
}

func TestFutureDeadline(t *testing.T) {
	each(t, func(t *testing.T, m Mode, c, srv net.Conn) {
		// A deadline that does not expire changes nothing.
		c.SetReadDeadline(time.Now().Add(time.Hour))
		go srv.Write([]byte("x"))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		// One that expires while the read is blocked ends it, never
		// before the deadline: compared with the deadline itself
		// (monotonic clock), not with a margin, since load only makes the
		// read return later. The upper bound only catches a hang.
		deadline := time.Now().Add(150 * time.Millisecond)
		c.SetReadDeadline(deadline)
		var err error
		within(t, 10*time.Second, "read with a deadline", func() { _, err = c.Read(make([]byte, 1)) })
		if early := time.Until(deadline); early > 0 {
			t.Errorf("read returned %s before its deadline", early)
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read: %v, want a deadline error", err)
		}
	})
}

func TestPastDeadlineWithoutIO(t *testing.T) {
	each(t, func(t *testing.T, m Mode, c, srv net.Conn) {
		// Expired while nothing was in progress: I/O fails with a
		// timeout, and works again once the deadline is moved.
		c.SetDeadline(time.Now().Add(-time.Second))
		if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("write: %v, want a deadline error", err)
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read: %v, want a deadline error", err)
		}
		c.SetDeadline(time.Time{})
		go func() { io.Copy(srv, srv) }()
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		// Read deadline only: writes go on.
		c.SetReadDeadline(time.Unix(1, 0))
		if _, err := c.Write([]byte("y")); err != nil {
			t.Errorf("write with an expired read deadline: %v", err)
		}
	})
}

func TestWriteDeadlineInterruptsWrite(t *testing.T) {
	each(t, func(t *testing.T, m Mode, c, srv net.Conn) {
		// Nobody reads srv: the write fills the buffers and blocks.
		c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		var err error
		within(t, 3*time.Second, "blocked write", func() {
			for err == nil {
				_, err = c.Write(make([]byte, 1<<20))
			}
		})
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("write: %v, want a deadline error", err)
		}
	})
}

func TestCloseInterrupts(t *testing.T) {
	each(t, func(t *testing.T, m Mode, c, srv net.Conn) {
		go func() {
			time.Sleep(150 * time.Millisecond)
			c.Close()
		}()
		var err error
		within(t, 2*time.Second, "blocked read", func() { _, err = c.Read(make([]byte, 8)) })
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read: %v, want net.ErrClosed", err)
		}
		if err := c.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second close: %v", err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("write after close: %v", err)
		}
		if err := c.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
			t.Errorf("deadline after close: %v", err)
		}
	})
}

// TestConcurrentReadWrite: a reader waiting for data does not stop a
// writer (pgconn's background reader runs during slow writes).
func TestConcurrentReadWrite(t *testing.T) {
	each(t, func(t *testing.T, m Mode, c, srv net.Conn) {
		const size = 8 << 20
		got := make(chan int, 1)
		go func() {
			n, _ := io.Copy(io.Discard, io.LimitReader(c, size))
			got <- int(n)
		}()
		go func() {
			io.Copy(srv, io.LimitReader(srv, size)) // echo size bytes
		}()
		within(t, 10*time.Second, "echo", func() {
			if n, err := c.Write(make([]byte, size)); n != size || err != nil {
				t.Errorf("write: %d, %v", n, err)
			}
			if n := <-got; n != size {
				t.Errorf("read %d bytes, want %d", n, size)
			}
		})
	})
}

func TestWrapLeavesOthersAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	tc := tls.Client(a, &tls.Config{InsecureSkipVerify: true})
	for _, w := range wrappers {
		if w.wrap(a) != a {
			t.Errorf("%s: a net.Pipe was wrapped", w.mode)
		}
		if w.wrap(tc) != net.Conn(tc) {
			t.Errorf("%s: a TLS connection was wrapped", w.mode)
		}
	}
}

// fullHold is a Hold with no places: every wait of a connection with it
// falls back to the netpoller, so its Reads wait first there.
func fullHold() *Hold { return &Hold{} }

// wrapFullHold wraps nc raw with a fullHold.
func wrapFullHold(nc net.Conn) net.Conn { return wrapRaw(nc, fullHold()) }

// TestWaitFirst: with a Hold, a Read after a Write sends the request from
// inside the netpoller's read callback and waits for the answer without a
// read that finds nothing, in the netpoller when the Hold does not take the
// wait; answers already there, answers in pieces and many connections at
// once (readiness recorded by other threads) never hang.
func TestWaitFirst(t *testing.T) {
	for _, network := range transports {
		t.Run(network, func(t *testing.T) {
			c, srv := pair(t, network, wrapFullHold)
			rc := c.(*rawConn)
			// A peer that answers each 4-byte request after a while,
			// ending as a PostgreSQL server does when it waits for the
			// client (ReadyForQuery): at first whole, then the first
			// half, a pause, the second half.
			const trips = 200
			go func() {
				req := make([]byte, 4)
				for i := 0; ; i++ {
					if _, err := io.ReadFull(srv, req); err != nil {
						return
					}
					answer := append(req[:4:4], readyForQuery...)
					time.Sleep(200 * time.Microsecond)
					if i < trips/2 {
						srv.Write(answer)
						continue
					}
					srv.Write(answer[:5])
					time.Sleep(200 * time.Microsecond)
					srv.Write(answer[5:])
				}
			}()
			trip := func(i int) bool {
				req := []byte{byte(i), 1, 2, byte(i >> 8)}
				if _, err := c.Write(req); err != nil {
					t.Errorf("write: %v", err)
					return false
				}
				got, err := readAnswer(c, len(req)+len(readyForQuery))
				if want := string(req) + string(readyForQuery); err != nil || string(got) != want {
					t.Errorf("trip %d: %v, %v", i, got, err)
					return false
				}
				return true
			}
			within(t, 20*time.Second, "round trips", func() {
				for i := range trips / 2 {
					if !trip(i) {
						return
					}
				}
				// Reading first would find nothing once a trip; waiting
				// first, only a few spurious wake-ups do.
				if rc.eagain > trips/2/4 {
					t.Errorf("%d reads found nothing in %d round trips, want almost none", rc.eagain, trips/2)
				}
				for i := trips / 2; i < trips; i++ { // answers in pieces
					if !trip(i) {
						return
					}
				}
			})
		})
	}
	// Instant answers on many connections, half of them reading first
	// (no Hold): readiness is often recorded by another thread before the
	// Read begins.
	t.Run("many", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 16 {
			wrap := wrapFullHold
			if i/2%2 == 1 {
				wrap = WrapRaw
			}
			c, srv := pair(t, transports[i%2], wrap)
			go func() { io.Copy(srv, srv) }()
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 3)
				for range 2000 {
					if _, err := c.Write([]byte("abc")); err != nil {
						t.Error(err)
						return
					}
					if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "abc" {
						t.Errorf("read %q, %v", buf, err)
						return
					}
				}
			}()
		}
		within(t, 60*time.Second, "16 echo clients", wg.Wait)
	})
}

// TestReadsFirstWithoutHold: without a Hold a Read reads right after
// sending the kept request, as pgbench does, even when the answer is slow
// (see guessHit).
func TestReadsFirstWithoutHold(t *testing.T) {
	c, srv := pair(t, "unix", WrapRaw)
	rc := c.(*rawConn)
	go func() {
		req := make([]byte, 4)
		for {
			if _, err := io.ReadFull(srv, req); err != nil {
				return
			}
			time.Sleep(200 * time.Microsecond)
			srv.Write(append(req[:4:4], readyForQuery...))
		}
	}()
	const trips = 40
	within(t, 20*time.Second, "round trips", func() {
		for i := range trips {
			req := []byte{byte(i), 1, 2, 3}
			if _, err := c.Write(req); err != nil {
				t.Fatalf("write: %v", err)
			}
			got, err := readAnswer(c, len(req)+len(readyForQuery))
			if want := string(req) + string(readyForQuery); err != nil || string(got) != want {
				t.Fatalf("trip %d: %v, %v", i, got, err)
			}
		}
	})
	if rc.trips != 0 || rc.eagain < trips/2 {
		t.Errorf("%d round trips waited first and %d reads found nothing in %d slow round trips, want none and most", rc.trips, rc.eagain, trips)
	}
}

// readyForQuery is a PostgreSQL server's ReadyForQuery message (idle).
var readyForQuery = []byte{'Z', 0, 0, 0, 5, 'I'}

// readAnswer reads n bytes from c as pgconn does, into a buffer larger than
// the answer, so that the last read leaves the socket empty.
func readAnswer(c net.Conn, n int) ([]byte, error) {
	buf := make([]byte, n+64)
	got := 0
	for got < n {
		m, err := c.Read(buf[got:])
		got += m
		if err != nil {
			return buf[:got], err
		}
	}
	return buf[:got], nil
}

// TestKeptWrites: what a Write keeps reaches the peer in Write order,
// after a deadline interrupts the Read that would have sent it, and at
// Close; large writes and writes with a deadline set are sent at once.
func TestKeptWrites(t *testing.T) {
	for _, network := range transports {
		t.Run(network, func(t *testing.T) {
			c, srv := pair(t, network, WrapRaw)
			rc := c.(*rawConn)
			if _, err := c.Write([]byte("a")); err != nil || len(rc.kept) != 1 {
				t.Fatalf("small write: kept %d bytes, %v", len(rc.kept), err)
			}
			c.SetReadDeadline(time.Unix(1, 0))
			if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read: %v, want a deadline error", err)
			}
			c.SetReadDeadline(time.Time{})
			c.Write([]byte("b"))
			big := make([]byte, maxKept+1)
			big[0] = 'c'
			go func() { // sent at once: the peer reads it while the Write waits
				if _, err := c.Write(big); err != nil {
					t.Error(err)
				}
				c.SetWriteDeadline(time.Now().Add(time.Hour))
				c.Write([]byte("d")) // a deadline is set: sent at once
				c.SetWriteDeadline(time.Time{})
				c.Write([]byte("e")) // kept until Close
				c.Close()
			}()
			var got []byte
			within(t, 10*time.Second, "the peer's reads", func() {
				got, _ = io.ReadAll(srv) // until Close
			})
			want := "abc" + string(big[1:]) + "de"
			if string(got) != want {
				t.Errorf("peer got %d bytes starting %q, want %d starting %q", len(got), got[:min(3, len(got))], len(want), want[:3])
			}
		})
	}
}

// TestProtocols: queries, failures with their SQLSTATE and cancellation
// under pgx's simple, extended and prepared protocols, in every mode.
func TestProtocols(t *testing.T) {
	dsn := pgtest.DSN(t)
	modes := map[string]pgx.QueryExecMode{
		"simple":   pgx.QueryExecModeSimpleProtocol,
		"extended": pgx.QueryExecModeExec,
		"prepared": pgx.QueryExecModeCacheStatement,
	}
	for _, m := range []Mode{Raw, Blocking, Std} {
		for pname, qm := range modes {
			t.Run(string(m)+"/"+pname, func(t *testing.T) {
				conn := connect(t, dsn, "unix", m)
				ctx := context.Background()
				for i := range 500 {
					var got int
					if err := conn.QueryRow(ctx, "select $1::int * 2", qm, i).Scan(&got); err != nil || got != 2*i {
						t.Fatalf("got %d, %v; want %d", got, err, 2*i)
					}
				}
				_, err := conn.Exec(ctx, "select 1 / ($1::int - 1)", qm, 1)
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "22012" {
					t.Fatalf("division by zero: %v, want SQLSTATE 22012", err)
				}
				var one int
				if err := conn.QueryRow(ctx, "select $1::int", qm, 1).Scan(&one); err != nil || one != 1 {
					t.Fatalf("after a failure: %d, %v", one, err)
				}
				// A context that ends while the answer is awaited: pgconn's
				// watcher sets a deadline on the socket.
				cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
				var err2 error
				within(t, 10*time.Second, "a cancelled query", func() {
					_, err2 = conn.Exec(cctx, "select pg_sleep($1::int)", qm, 10)
				})
				if err2 == nil || cctx.Err() == nil {
					t.Fatalf("cancelled query: %v", err2)
				}
				if !conn.IsClosed() {
					// Cancelled through a CancelRequest, the connection
					// may survive: then it must still work.
					if err := conn.QueryRow(ctx, "select $1::int", qm, 1).Scan(&one); err != nil {
						t.Errorf("after a cancel: %v", err)
					}
				}
			})
		}
	}
}

// TestReadMoreAndUnread: ReadMore returns the stream's next bytes after the
// kept tail of its last result, grows its buffer for a tail that fills it,
// and bytes given back by Unread come first to Read and ReadMore.
func TestReadMoreAndUnread(t *testing.T) {
	for _, network := range transports {
		t.Run(network, func(t *testing.T) {
			c, srv := pair(t, network, WrapRaw)
			rc := c.(*rawConn)
			send := func(s string) {
				t.Helper()
				if _, err := srv.Write([]byte(s)); err != nil {
					t.Fatal(err)
				}
			}
			readMore := func(keep int, want string) {
				t.Helper()
				var got []byte
				within(t, 10*time.Second, "ReadMore", func() {
					var err error
					if got, err = rc.ReadMore(keep); err != nil {
						t.Fatal(err)
					}
				})
				if string(got) != want {
					t.Fatalf("ReadMore(%d) = %q, want %q", keep, got, want)
				}
			}
			send("abcdef")
			readMore(0, "abcdef")
			send("gh")
			readMore(2, "efgh") // "ef" kept
			rc.Unread(3)        // "fgh" back
			p := make([]byte, 2)
			if n, err := c.Read(p); n != 2 || err != nil || string(p) != "fg" {
				t.Fatalf("Read after Unread: %q, %v; want fg", p[:n], err)
			}
			readMore(0, "h") // the rest of what was given back, before the socket
			send("ij")
			readMore(1, "hij")
			big := strings.Repeat("x", 3*inSize)
			send(big)
			got := ""
			for keep := 0; len(got) < len(big); keep = len(got) { // all kept: the buffer grows
				b, err := rc.ReadMore(keep)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			}
			if got != big || len(rc.in) < len(big) {
				t.Fatalf("kept %d bytes in a %d-byte buffer, want %d", len(got), len(rc.in), len(big))
			}
		})
	}
}
