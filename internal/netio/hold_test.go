package netio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
	// A wait ends within holdFor, but the cancelled query's last read may
	// run on pgconn's background reader after Exec returned: on a busy
	// machine it may still be in the kernel here.
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
	// Longer than one wait in the kernel: the netpoller takes over.
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
// from one that came during it (what guessHit learns from) and from none.
// A loaded machine can delay a wait's start past the answer, stretch a
// wait that finds it at once or the answer's sleep past the wait, so each
// case is tried until it is seen, for up to 5 s.
func TestHoldTellsAtOnce(t *testing.T) {
	h := NewHold(1)
	c, srv := pair(t, "unix", func(nc net.Conn) net.Conn { return wrapRaw(nc, h) })
	var fd uintptr
	c.(*rawConn).rc.Control(func(f uintptr) { fd = f })
	seen := func(what string, want int, answer func()) {
		t.Helper()
		var got []int
		within(t, 10*time.Second, what, func() {
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
				answer()
				r := h.wait(fd)
				c.SetReadDeadline(time.Now().Add(time.Second))
				if r != notReady {
					c.Read(make([]byte, 1))
				}
				if got = append(got, r); r == want {
					return
				}
			}
		})
		if got[len(got)-1] != want {
			t.Errorf("%s: %d waits, none returned %d (the last: %v)", what, len(got), want, got[max(0, len(got)-20):])
		}
	}
	seen("nothing to read", notReady, func() {})
	seen("an answer there", readyAtOnce, func() { srv.Write([]byte("a")) })
	seen("an answer 200 µs later", readyLater, func() {
		go func() {
			time.Sleep(200 * time.Microsecond)
			srv.Write([]byte("b"))
		}()
	})
}
