package sampler

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestTextIsPgx: the server sources' text parsing gives what pgx's scan
// gave on the same simple-protocol result, bit for bit: floats of every
// kind (shortest round-trip text, extremes, NaN, infinities, a random
// column), int4, int8, bool, text and NULLs.
func TestTextIsPgx(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, parseConfig(t, pgtest.DSN(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	conn.Config().DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	if _, err := conn.Exec(ctx, `create temporary table v as
		select x::float8 a, (x * 1e-7)::float8 b, (-x * 1e300)::float8 c, i::int4 - 1000 d, (i::int8 << 40) * -3 e,
		i % 3 = 0 f, 'state ' || i g, case when i % 2 = 0 then x end h, i
		from (select random() as x, i from generate_series(1, 500) i) s
		union all select 'NaN', 'Infinity', '-Infinity', 2147483647, -9223372036854775808, false, '', null, 501
		union all select '5e-324', '1.7976931348623157e308', '-0', -2147483648, 9223372036854775807, true, 'é"x', 0.1 + 0.2, 502`); err != nil {
		t.Fatal(err)
	}
	const query = `select a, b, c, d, e, f, g, h from v order by i`
	type row struct {
		f    [3]float64
		i4   int32
		i8   int64
		b    bool
		s    string
		null *float64
	}
	var want []row
	rows, err := conn.Query(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.f[0], &r.f[1], &r.f[2], &r.i4, &r.i8, &r.b, &r.s, &r.null); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	mrr := conn.PgConn().Exec(ctx, query)
	if !mrr.NextResult() {
		t.Fatal(mrr.Close())
	}
	var got []row
	err = eachRow(mrr.ResultReader(), 8, func(vals [][]byte) error {
		var r row
		if err := floats(vals[:3], r.f[:]); err != nil {
			return err
		}
		i4, err := textInt(vals[3], 32)
		if err != nil {
			return err
		}
		r.i4 = int32(i4)
		if r.i8, err = textInt(vals[4], 64); err != nil {
			return err
		}
		if r.b, err = textBool(vals[5]); err != nil {
			return err
		}
		if r.s, err = textString(vals[6]); err != nil {
			return err
		}
		f, ok, err := textFloatOrNull(vals[7])
		if err != nil {
			return err
		}
		if ok {
			r.null = &f
		}
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mrr.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) != 502 {
		t.Fatalf("%d rows, pgx %d", len(got), len(want))
	}
	bits := math.Float64bits
	for i, w := range want {
		g := got[i]
		same := g.i4 == w.i4 && g.i8 == w.i8 && g.b == w.b && g.s == w.s && (g.null == nil) == (w.null == nil) &&
			(g.null == nil || bits(*g.null) == bits(*w.null))
		for j := range g.f {
			same = same && (bits(g.f[j]) == bits(w.f[j]) || math.IsNaN(g.f[j]) && math.IsNaN(w.f[j]))
		}
		if !same {
			t.Fatalf("row %d: parsed %+v, pgx %+v", i, g, w)
		}
	}
	if _, err := textFloat(nil); err == nil {
		t.Error("NULL parsed as a float")
	}
}
