package pgtext_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/pgtext"
)

func connect(t *testing.T) *pgtext.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pc, err := pgconn.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	c := pgtext.New(pc)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestConnReadsAsPgx: every argument and destination type Conn takes
// gives what a *pgx.Conn gives for the same statement.
func TestConnReadsAsPgx(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	names := []string{"a", `q"uote`, `back\slash`, "NULL", "", "com,ma {x}"}
	const sql = `select $1::text, $2::bool, $3::int4, $4::int8, $5::float8, $6::int2,
		array_length($7::text[], 1), ($7::text[])[2], ($7::text[])[3], ($7::text[])[4], ($7::text[])[5], ($7::text[])[6]`
	type result struct {
		s                  string
		b                  bool
		i                  int
		i64                int64
		f                  float64
		i16                int16
		n                  int32
		e2, e3, e4, e5, e6 string
	}
	read := func(q pgtext.Querier) result {
		var r result
		err := q.QueryRow(ctx, sql, "text é", true, 42, int64(1)<<40, 1.25, int32(7), names).
			Scan(&r.s, &r.b, &r.i, &r.i64, &r.f, &r.i16, &r.n, &r.e2, &r.e3, &r.e4, &r.e5, &r.e6)
		if err != nil {
			t.Fatalf("%T: %v", q, err)
		}
		return r
	}
	want := read(pgtest.Connect(t, dsn, pgx.QueryExecModeCacheDescribe))
	if got := read(connect(t)); got != want {
		t.Errorf("pgtext.Conn read %+v, pgx.Conn %+v", got, want)
	}
}

// TestConnRows: Query's rows end with the command tag; QueryRow without a
// row is pgx.ErrNoRows; NULL and an unknown destination are errors; a
// server error keeps its SQLSTATE; Exec runs several statements.
func TestConnRows(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	rows, err := c.Query(ctx, "select g from generate_series(1, 3) g")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	if rows.Err() != nil || sum != 6 || rows.CommandTag().RowsAffected() != 3 {
		t.Errorf("rows: sum %d, err %v, tag %q", sum, rows.Err(), rows.CommandTag())
	}
	var s string
	if err := c.QueryRow(ctx, "select 'x' where false").Scan(&s); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("no row: %v, want pgx.ErrNoRows", err)
	}
	if err := c.QueryRow(ctx, "select null::text").Scan(&s); err == nil || !strings.Contains(err.Error(), "NULL") {
		t.Errorf("NULL into *string: %v, want an error", err)
	}
	var tm time.Time
	if err := c.QueryRow(ctx, "select now()").Scan(&tm); err == nil || !strings.Contains(err.Error(), "time.Time") {
		t.Errorf("into *time.Time: %v, want an error naming the type", err)
	}
	if _, err := c.Exec(ctx, "select $1", time.Now()); err == nil {
		t.Error("a time.Time argument: no error")
	}
	var pgErr *pgconn.PgError
	if err := c.QueryRow(ctx, "select 1/0").Scan(&s); !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Errorf("1/0: %v, want SQLSTATE 22012", err)
	}
	tag, err := c.Exec(ctx, "create temp table t(n int); insert into t values (1), (2)")
	if err != nil || tag.RowsAffected() != 2 {
		t.Errorf("Exec of two statements: tag %q, %v", tag, err)
	}
	if tag, err := c.Exec(ctx, "delete from t where n = $1", 2); err != nil || tag.RowsAffected() != 1 {
		t.Errorf("Exec with an argument: tag %q, %v", tag, err)
	}
}
