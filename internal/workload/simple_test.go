package workload_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

// TestSimpleExec: simple-protocol statements run (several in one query
// too), fail with their SQLSTATE, keep pgconn's transaction status, and an
// interrupted statement closes the connection; in every socket mode.
func TestSimpleExec(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, m := range []netio.Mode{netio.Raw, netio.Std, netio.Blocking} {
		t.Run(string(m), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(dsn)
			if err != nil {
				t.Fatal(err)
			}
			netio.Apply(&cfg.Config, m)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			pc := conn.PgConn()
			var x workload.SimpleExec
			exec := func(sql string) error { return x.Exec(pc, []byte(sql)) }
			if err := exec("create temp table t (a int)"); err != nil {
				t.Fatal(err)
			}
			for range 50 {
				if err := exec("insert into t values (1); select * from t"); err != nil {
					t.Fatal(err)
				}
			}
			var n int
			if err := conn.QueryRow(ctx, "select count(*) from t").Scan(&n); err != nil || n != 50 {
				t.Fatalf("rows %d, %v; want 50", n, err)
			}
			var pe *pgconn.PgError
			if err := exec("select 1/0"); !errors.As(err, &pe) || pe.Code != "22012" {
				t.Fatalf("division by zero: %v, want SQLSTATE 22012", err)
			}
			// The first failure of a query is returned; the rest of it does not run.
			if err := exec("select 1/0; insert into t values (2)"); !errors.As(err, &pe) || pe.Code != "22012" {
				t.Fatalf("first failure: %v, want SQLSTATE 22012", err)
			}
			if s := pc.TxStatus(); s != 'I' {
				t.Errorf("status after a failed statement: %c, want I", s)
			}
			exec("begin")
			if s := pc.TxStatus(); s != 'T' {
				t.Errorf("status in a transaction: %c, want T", s)
			}
			exec("select 1/0")
			if s := pc.TxStatus(); s != 'E' {
				t.Errorf("status after a failure in a transaction: %c, want E", s)
			}
			if err := exec("rollback"); err != nil || pc.TxStatus() != 'I' {
				t.Errorf("rollback: %v, status %c", err, pc.TxStatus())
			}
			if err := exec(""); err != nil {
				t.Errorf("empty query: %v", err)
			}
			if err := conn.QueryRow(ctx, "select count(*) from t").Scan(&n); err != nil || n != 50 {
				t.Fatalf("the connection after SimpleExec: rows %d, %v; want 50", n, err)
			}
			// An interrupt (a deadline in the past) ends a running
			// statement and the connection.
			done := make(chan error, 1)
			go func() { done <- exec("select pg_sleep(10)") }()
			time.Sleep(300 * time.Millisecond)
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
		})
	}
}
