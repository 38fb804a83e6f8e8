package roundtrip_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/roundtrip"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestPrepared: statements run, fail with their SQLSTATE, keep
// pgconn's transaction status, and an interrupted statement closes the
// connection; in every socket mode.
func TestPrepared(t *testing.T) {
	inEveryNetIOMode(t, func(t *testing.T, ctx context.Context, conn *pgx.Conn) {
		pc := conn.PgConn()
		if _, err := conn.Exec(ctx, "create temp table t (a int, b text)"); err != nil {
			t.Fatal(err)
		}
		prepare := func(name, sql string) *roundtrip.Prepared {
			if _, err := pc.Prepare(ctx, name, sql, nil); err != nil {
				t.Fatal(err)
			}
			return roundtrip.NewPrepared(name, nil)
		}
		ins := prepare("ins", "insert into t values ($1, $2)")
		div := prepare("div", "select 1 / $1::int")
		begin, rollback := prepare("begin", "begin"), prepare("rollback", "rollback")
		bg := context.Background()
		if !roundtrip.Usable(bg, pc) || roundtrip.Usable(ctx, pc) {
			t.Fatal("Usable: want true for an uncancellable context only")
		}
		for i := range 100 {
			if err := ins.Exec(pc, [][]byte{[]byte{'0' + byte(i%10)}, nil}); err != nil {
				t.Fatal(err)
			}
		}
		var n, nulls int
		if err := conn.QueryRow(ctx, "select count(*), count(*) filter (where b is null) from t").Scan(&n, &nulls); err != nil || n != 100 || nulls != 100 {
			t.Fatalf("rows %d, nulls %d, %v; want 100, 100", n, nulls, err)
		}
		if err := div.Exec(pc, [][]byte{[]byte("1")}); err != nil {
			t.Fatal(err)
		}
		var pe *pgconn.PgError
		if err := div.Exec(pc, [][]byte{[]byte("0")}); !errors.As(err, &pe) || pe.Code != "22012" {
			t.Fatalf("division by zero: %v, want SQLSTATE 22012", err)
		}
		if s := pc.TxStatus(); s != 'I' {
			t.Errorf("status after a failed statement: %c, want I", s)
		}
		begin.Exec(pc, nil)
		if s := pc.TxStatus(); s != 'T' {
			t.Errorf("status in a transaction: %c, want T", s)
		}
		div.Exec(pc, [][]byte{[]byte("0")})
		if s := pc.TxStatus(); s != 'E' {
			t.Errorf("status after a failure in a transaction: %c, want E", s)
		}
		if err := rollback.Exec(pc, nil); err != nil || pc.TxStatus() != 'I' {
			t.Errorf("rollback: %v, status %c", err, pc.TxStatus())
		}
		// Binary results, as sysbench asks for them.
		if _, err := pc.Prepare(ctx, "bin", "select $1::int8", nil); err != nil {
			t.Fatal(err)
		}
		if err := roundtrip.NewPrepared("bin", []int16{1}).Exec(pc, [][]byte{[]byte("7")}); err != nil {
			t.Fatal(err)
		}
		var v int64
		if err := conn.QueryRow(ctx, "select 7::int8").Scan(&v); err != nil || v != 7 {
			t.Fatalf("the connection after a binary result: %d, %v", v, err)
		}
		sleep := prepare("sleep", "select pg_sleep($1::int)")
		interruptEnds(t, pc, func() error { return sleep.Exec(pc, [][]byte{[]byte("10")}) })
	})
}
