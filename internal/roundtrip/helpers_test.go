package roundtrip_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgtest"
)

// inEveryNetIOMode runs f on a fresh connection to the test database in
// each socket mode, with a 30 s context for the test's own queries; set
// changes the connection's configuration first.
func inEveryNetIOMode(t *testing.T, f func(t *testing.T, ctx context.Context, conn *pgx.Conn), set ...func(*pgconn.Config)) {
	dsn := pgtest.DSN(t)
	for _, m := range []netio.Mode{netio.Raw, netio.Std, netio.Blocking} {
		t.Run(string(m), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(dsn)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range set {
				s(&cfg.Config)
			}
			netio.Apply(&cfg.Config, m)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			f(t, ctx, conn)
		})
	}
}

// interruptEnds checks that an interrupt (a deadline in the past) ends the
// running statement sleep starts, and the connection with it.
func interruptEnds(t *testing.T, pc *pgconn.PgConn, sleep func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- sleep() }()
	waitSleeping(t, pc.PID())
	pc.Conn().SetDeadline(time.Unix(1, 0))
	select {
	case err := <-done:
		if err == nil {
			t.Error("interrupted statement: no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("statement not interrupted")
	}
	if !pc.IsClosed() {
		t.Error("connection open after an interrupted statement")
	}
}

// waitSleeping waits (10 s at most) until backend pid runs pg_sleep: its
// client has sent the statement and waits for the answer.
func waitSleeping(t *testing.T, pid uint32) {
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
