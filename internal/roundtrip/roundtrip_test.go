package roundtrip_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/roundtrip"
)

// TestAnswersPgconnActsOn: the messages of an answer that pgconn acts on
// reach it, wherever they are in the answer (the raw socket mode reads
// the others without pgconn): a parameter status, notices, a notification
// sent while the connection was idle, a long row, many rows, and a FATAL
// error that closes the connection; in every socket mode.
func TestAnswersPgconnActsOn(t *testing.T) {
	var notices []string
	var notified []string
	inEveryNetIOMode(t, func(t *testing.T, ctx context.Context, conn *pgx.Conn) {
		notices, notified = nil, nil
		pc := conn.PgConn()
		var x roundtrip.Simple
		exec := func(sql string) error { return x.Exec(pc, []byte(sql)) }
		if err := exec("set application_name = 'quiet-reads'"); err != nil || pc.ParameterStatus("application_name") != "quiet-reads" {
			t.Errorf("set application_name: %v, pgconn has %q", err, pc.ParameterStatus("application_name"))
		}
		if err := exec("select 1; do $$ begin raise notice 'first'; raise notice 'second'; end $$; select 2"); err != nil {
			t.Fatal(err)
		}
		if strings.Join(notices, ",") != "first,second" {
			t.Errorf("notices %q, want first,second", notices)
		}
		if err := exec("listen quiet_reads"); err != nil {
			t.Fatal(err)
		}
		other, err := pgx.Connect(ctx, conn.Config().ConnString())
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close(context.Background())
		if _, err := other.Exec(ctx, "notify quiet_reads, 'hello'"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // sent to the idle connection: before the next answer
		if err := exec("select 3"); err != nil {
			t.Fatal(err)
		}
		if strings.Join(notified, ",") != "hello" {
			t.Errorf("notifications %q, want hello", notified)
		}
		long := strings.Repeat("x", 100_000)
		for _, sql := range []string{
			"select repeat('x', 100000)",
			"select g, repeat('y', 100) from generate_series(1, 5000) g",
			"select 4",
		} {
			if err := exec(sql); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		var got string
		if err := conn.QueryRow(ctx, "select repeat('x', 100000)").Scan(&got); err != nil || got != long {
			t.Fatalf("the connection after long answers: %d bytes, %v", len(got), err)
		}
		var pe *pgconn.PgError
		if err := exec("select pg_terminate_backend(pg_backend_pid())"); !errors.As(err, &pe) || pe.Code != "57P01" {
			t.Fatalf("terminated: %v, want SQLSTATE 57P01", err)
		}
		if !pc.IsClosed() {
			t.Error("connection open after a FATAL error")
		}
	}, func(c *pgconn.Config) {
		c.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
		c.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) { notified = append(notified, n.Payload) }
	})
}
