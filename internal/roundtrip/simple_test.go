package roundtrip_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/roundtrip"
)

// TestSimple: simple-protocol statements run (several in one query
// too), fail with their SQLSTATE, keep pgconn's transaction status, and an
// interrupted statement closes the connection; in every socket mode.
func TestSimple(t *testing.T) {
	inEveryNetIOMode(t, func(t *testing.T, ctx context.Context, conn *pgx.Conn) {
		pc := conn.PgConn()
		var x roundtrip.Simple
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
			t.Fatalf("the connection after Simple: rows %d, %v; want 50", n, err)
		}
		interruptEnds(t, pc, func() error { return exec("select pg_sleep(10)") })
	})
}
