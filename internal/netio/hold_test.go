package netio

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestHold runs raw connections that wait in the kernel (a Hold) through
// the three protocols over both transports, with answers slower than one
// wait and a cancelled query, from more clients than the Hold admits.
func TestHold(t *testing.T) {
	if NewHold(0) != nil {
		t.Fatal("NewHold(0) is not nil")
	}
	dsn := pgtest.DSN(t)
	h := NewHold(2)
	modes := []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec, pgx.QueryExecModeCacheStatement}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if transports[i%2] == "tcp" {
			cfg.Host = "127.0.0.1"
		}
		cfg.ConnectTimeout = 10 * time.Second
		cfg.DefaultQueryExecMode = modes[i%3]
		ApplyHold(&cfg.Config, Raw, h)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		if modeOf(conn) != Raw {
			t.Fatalf("connection in mode %s, want raw", modeOf(conn))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- holdClient(ctx, conn)
		}()
	}
	within(t, 60*time.Second, "clients with a hold", wg.Wait)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// The cancelled query's last read may run on pgconn's background
	// reader after Exec returned: on a busy machine it may still be in the
	// kernel here.
	deadline := time.Now().Add(5 * time.Second)
	for h.n.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := h.n.Load(); n != 0 {
		t.Fatalf("%d waits still counted 5 s after the clients ended", n)
	}
}

func holdClient(ctx context.Context, conn *pgx.Conn) error {
	for i := range 1000 {
		var got int
		if err := conn.QueryRow(ctx, "select $1::int + 1", i).Scan(&got); err != nil || got != i+1 {
			return fmt.Errorf("round trip %d: got %d, %v", i, got, err)
		}
	}
	// A slow answer, found by the held wait (or the netpoller's, past the
	// Hold's max).
	var got int
	if err := conn.QueryRow(ctx, "select $1::int from pg_sleep(0.02)", 7).Scan(&got); err != nil || got != 7 {
		return fmt.Errorf("slow answer: got %d, %v", got, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := conn.Exec(cctx, "select pg_sleep(10)"); err == nil {
		return errors.New("a cancelled query returned no error")
	}
	return nil
}

// TestHoldTellsAtOnce: a wait tells an answer that was there when it began
// from one that came during it (what guessHit learns from). A loaded
// machine can delay a wait's start past the answer or stretch a wait that
// finds it at once, so each case is tried until it is seen, for up to 5 s.
func TestHoldTellsAtOnce(t *testing.T) {
	c, srv := pair(t, "unix", func(nc net.Conn) net.Conn { return wrapRaw(nc, NewHold(1)) })
	rc := c.(*rawConn)
	var fd uintptr
	rc.rc.Control(func(f uintptr) { fd = f })
	seen := func(what string, want int, answer func()) {
		t.Helper()
		var got []int
		within(t, 10*time.Second, what, func() {
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
				answer()
				r := rc.holdWait(fd)
				c.Read(make([]byte, 1))
				if got = append(got, r); r == want {
					return
				}
			}
		})
		if got[len(got)-1] != want {
			t.Errorf("%s: %d waits, none returned %d (the last: %v)", what, len(got), want, got[max(0, len(got)-20):])
		}
	}
	seen("an answer there", readyAtOnce, func() { srv.Write([]byte("a")) })
	seen("an answer 200 µs later", readyLater, func() {
		go func() {
			time.Sleep(200 * time.Microsecond)
			srv.Write([]byte("b"))
		}()
	})
}

// TestHeldWaitEndsAtDeadlineOrClose: a held wait has no timeout; a read
// deadline set (as a stop interrupts a statement) or Close while it sleeps
// ends it at once, and the netpoller returns the deadline's or Close's
// error; also with one P, which the waiting Read holds: the goroutine that
// stops it gets the P through the runtime's preemption, which interrupts
// the wait for a yield.
func TestHeldWaitEndsAtDeadlineOrClose(t *testing.T) {
	for _, procs := range []int{2, 1} {
		for _, how := range []string{"deadline", "close"} {
			t.Run(fmt.Sprintf("%s/GOMAXPROCS=%d", how, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				h := NewHold(procs)
				c, _ := pair(t, "unix", func(nc net.Conn) net.Conn { return wrapRaw(nc, h) })
				rc := c.(*rawConn)
				done := make(chan error, 1)
				go func() {
					_, err := c.Read(make([]byte, 1))
					done <- err
				}()
				waitHeld(t, rc)
				start := time.Now()
				if how == "deadline" {
					c.SetReadDeadline(time.Unix(1, 0))
				} else {
					c.Close()
				}
				var err error
				within(t, 5*time.Second, "the interrupted Read", func() { err = <-done })
				t.Logf("ended %v after the %s", time.Since(start), how)
				if how == "deadline" && !errors.Is(err, os.ErrDeadlineExceeded) || how == "close" && !errors.Is(err, net.ErrClosed) {
					t.Errorf("Read: %v, want the %s's error", err, how)
				}
				if n := h.n.Load(); n != 0 {
					t.Errorf("%d waits counted after the Read returned", n)
				}
			})
		}
	}
}

// TestHeldWaitReadsSlowAnswers: answers of a few milliseconds (pgbench
// scripts with slow statements, -c 1) on a unix socket are found by the
// held wait itself, not by the netpoller after a timeout, while it is not
// told to leave them to the netpoller (parkAfter); and read right.
func TestHeldWaitReadsSlowAnswers(t *testing.T) {
	conn := connectHold(t, pgtest.DSN(t), "unix", Raw, NewHold(1))
	rc := conn.PgConn().Conn().(*rawConn)
	rc.parkAfter = math.MaxInt64
	const n = 20
	held, parked := rc.held, rc.parked
	slowAnswers(t, conn, n, "0.003", 0)
	if got := rc.held - held; got < n {
		t.Errorf("%d of %d slow answers found by the held wait", got, n)
	}
	if got := rc.parked - parked; got > 0 {
		t.Errorf("%d waits left to the netpoller, want none", got)
	}
}

// TestUnixSocketNotWatchedForWrites: a held unix connection's socket is
// watched by the runtime's epoll for reading only (quiet_linux.go), so its
// slow answers wait in the netpoller as over TCP; a send that fills the
// socket's buffer (a 4 MB parameter) still waits for the server to read
// and completes.
func TestUnixSocketNotWatchedForWrites(t *testing.T) {
	conn := connectHold(t, pgtest.DSN(t), "unix", Raw, NewHold(1))
	rc := conn.PgConn().Conn().(*rawConn)
	if !rc.quiet {
		t.Fatal("the socket's registration in the runtime's epoll was not found")
	}
	events := func() uint32 {
		var ev uint32
		rc.rc.Control(func(fd uintptr) { ev, _, _ = watched(int(goEpoll.Load()), int(fd)) })
		return ev
	}
	if ev := events(); ev != goPollEvents&^unix.EPOLLOUT {
		t.Fatalf("socket registered for events %#x, want %#x", ev, goPollEvents&^unix.EPOLLOUT)
	}
	const n = 20
	slowAnswers(t, conn, n, "0.003", 0)
	if rc.parked < n-2 {
		t.Errorf("%d of %d slow answers waited for in the netpoller, want all but the first two", rc.parked, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	big := strings.Repeat("x", 4<<20)
	var got int
	if err := conn.QueryRow(ctx, "select length($1::text)", big).Scan(&got); err != nil || got != len(big) {
		t.Fatalf("4 MB parameter: got %d, %v", got, err)
	}
	if rc.quiet || events() != goPollEvents {
		t.Errorf("after a send that waited: quiet %v, events %#x, want %#x", rc.quiet, events(), goPollEvents)
	}
	slowAnswers(t, conn, 3, "0.003", 0)
}

// TestSlowAnswersWaitInTheNetpoller: after two answers in a row that took
// parkAfter or more (3 ms over TCP, 30 ms over a unix socket), the next
// are waited for in the netpoller (no P held, so the runtime's monitor can sleep) and read
// right; fast answers bring the held wait back.
func TestSlowAnswersWaitInTheNetpoller(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, tc := range []struct {
		transport, sleep string
		n                uint
	}{{"tcp", "0.003", 20}, {"unix", "0.03", 6}} {
		t.Run(tc.transport, func(t *testing.T) {
			conn := connectHold(t, dsn, tc.transport, Raw, NewHold(1))
			rc := conn.PgConn().Conn().(*rawConn)
			slowAnswers(t, conn, int(tc.n), tc.sleep, 0)
			if rc.parked < tc.n-2 {
				t.Errorf("%d of %d slow answers waited for in the netpoller, want all but the first two", rc.parked, tc.n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// A loaded machine may stretch a fast answer past 1 ms: up
			// to 1,000 tries.
			for i := 0; i < 1000 && (i < 20 || rc.parkSlow); i++ {
				var got int
				if err := conn.QueryRow(ctx, "select $1::int", i).Scan(&got); err != nil || got != i {
					t.Fatalf("fast answer %d: got %d, %v", i, got, err)
				}
			}
			if rc.parkSlow {
				t.Error("after 1,000 fast answers, the next wait would still be the netpoller's")
			}
		})
	}
}

// slowAnswers runs n statements of pg_sleep(sleep) on conn, checks their
// answers, and tells how many of the first n-1 took late or more.
func slowAnswers(t *testing.T, conn *pgx.Conn, n int, sleep string, late time.Duration) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lates := 0
	for i := range n {
		start := time.Now()
		var got int
		if err := conn.QueryRow(ctx, "select $1::int from pg_sleep("+sleep+")", i).Scan(&got); err != nil || got != i {
			t.Fatalf("slow answer %d: got %d, %v", i, got, err)
		}
		if i < n-1 && time.Since(start) >= late {
			lates++
		}
	}
	return lates
}

// TestStopWhileHeldInAStatement: a statement interrupted as the driver
// stops a run (a deadline in the past) or as its connection is closed
// while its client sleeps in a held wait, or in the netpoller after slow
// answers (parkSlow; the unix socket watched for reading only), with
// GOMAXPROCS 1, returns promptly with an error.
func TestStopWhileHeldInAStatement(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	dsn := pgtest.DSN(t)
	admin := connectHold(t, dsn, "unix", Std, nil)
	for _, parked := range []bool{false, true} {
		for _, how := range []string{"deadline", "close"} {
			t.Run(fmt.Sprintf("parked=%v/%s", parked, how), func(t *testing.T) {
				conn := connectHold(t, dsn, "unix", Raw, NewHold(1))
				rc := conn.PgConn().Conn().(*rawConn)
				rc.parkAfter = math.MaxInt64 // held, however slow the setup's answers
				if parked {
					rc.parkAfter, rc.parkSlow = 0, true // parked, after any answer
				}
				done := make(chan error, 1)
				go func() {
					_, err := conn.Exec(context.Background(), "select pg_sleep(60)")
					done <- err
				}()
				waitSleeping(t, admin, conn.PgConn().PID())
				if parked {
					// Sleeping on the server, so the Read is parked or
					// about to: the deadline or Close ends it either way.
				} else {
					waitHeld(t, rc)
				}
				start := time.Now()
				if how == "deadline" {
					rc.SetDeadline(time.Unix(1, 0))
				} else {
					rc.Close()
				}
				within(t, 5*time.Second, "the interrupted statement", func() {
					if err := <-done; err == nil {
						t.Error("interrupted statement: no error")
					}
				})
				t.Logf("statement ended %v after the %s", time.Since(start), how)
				// pgconn's asyncClose still reads rc (its waits count parked).
				within(t, 20*time.Second, "the connection's clean-up", func() { <-conn.PgConn().CleanupDone() })
				if parked && rc.parked == 0 {
					t.Error("no wait was left to the netpoller")
				}
			})
		}
	}
}

// waitHeld waits (10 s at most) until a Read of rc sleeps in a held wait.
func waitHeld(t *testing.T, rc *rawConn) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !rc.waiting.Load(); runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatal("no held wait began within 10 s")
		}
	}
}
