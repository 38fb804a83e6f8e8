package ycsb

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

var _ workload.Slicer = (*Workload)(nil)

// tableFingerprint hashes every row of usertable in key order.
func tableFingerprint(t *testing.T, conn *pgx.Conn) (string, int64) {
	t.Helper()
	var sum string
	var n int64
	err := conn.QueryRow(context.Background(),
		"select md5(string_agg(u::text, E'\\n' order by ycsb_key)), count(*) from usertable u").Scan(&sum, &n)
	if err != nil {
		t.Fatal(err)
	}
	return sum, n
}

// TestKeysSQL: the keys a slice deletes before it loads, computed in SQL
// (FNV-64 in numeric, zero padding), are keyName's, byte for byte.
func TestKeysSQL(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, pgtest.DSN(t))
	for _, args := range [][]string{
		{"--insert-order", "hashed"},
		{"--insert-order", "ordered"},
		{"--insert-order", "hashed", "--zero-padding", "22"},
		{"--insert-order", "ordered", "--zero-padding", "6"},
	} {
		w := newWorkload(t, args...)
		for _, r := range [][2]int64{{0, 3000}, {1 << 40, 1<<40 + 500}, {1<<62 - 100, 1<<62 + 100}} {
			rows, err := conn.Query(ctx, w.keysSQL(r[0], r[1]-1))
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			if int64(len(keys)) != r[1]-r[0] {
				t.Fatalf("%v: %d keys for %v", args, len(keys), r)
			}
			for i, got := range keys {
				k := r[0] + int64(i)
				if want := string(keyName(nil, k, w.insertOrder == orderHashed, w.zeroPadding)); got != want {
					t.Fatalf("%v: key number %d: SQL %s, keyName %s", args, k, got, want)
				}
			}
		}
	}
}

// TestSlicesMatchWholeLoad: two inits with --insert-start/--insert-count
// (loaded out of order, one of them twice) make exactly the table one
// whole init makes: the same rows (fingerprint), the primary key built by
// the slice that completed the set, the load's mark. Before the set is
// complete a run refuses the table.
func TestSlicesMatchWholeLoad(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		{"--records", "3000"},
		{"--records", "3000", "--insert-order", "ordered", "--zero-padding", "8", "--field-length-distribution", "zipfian", "--field-length", "60"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			whole := connect(t, loadertest.Loaded(t, newWorkload(t, args...)))
			want, n := tableFingerprint(t, whole)
			if n != 3000 {
				t.Fatalf("whole load: %d rows", n)
			}

			dsn := pgtest.DSN(t)
			conn := connect(t, dsn)
			dial := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) }
			slice := func(start, count int) loader.Stats {
				t.Helper()
				w := newWorkload(t, append(args, "--insert-start", fmt.Sprint(start), "--insert-count", fmt.Sprint(count))...)
				st, err := loader.Init(ctx, dial, w, loader.Options{Workers: 2})
				if err != nil {
					t.Fatalf("slice %d+%d: %v", start, count, err)
				}
				return st
			}
			if st := slice(1200, 1800); st.Slice == nil || st.Slice.KeysBuilt || st.Rows != 1800 {
				t.Fatalf("first slice: %+v", st)
			}
			err := newWorkload(t).Prepare(ctx, conn)
			if err == nil || !strings.Contains(err.Error(), "incomplete (key numbers loaded: 1200-2999)") {
				t.Errorf("Prepare after one slice: %v", err)
			}
			slice(1200, 1800) // again: replaces its rows
			if st := slice(0, 1200); st.Slice == nil || !st.Slice.KeysBuilt {
				t.Fatalf("completing slice: %+v", st)
			}
			if got, n := tableFingerprint(t, conn); got != want || n != 3000 {
				t.Errorf("slices: %d rows, fingerprint %s; whole load: %s", n, got, want)
			}
			var pk bool
			if err := conn.QueryRow(ctx, "select exists (select 1 from pg_constraint where conrelid = 'usertable'::regclass and contype = 'p')").Scan(&pk); err != nil || !pk {
				t.Errorf("primary key after the slices: %v (%v)", pk, err)
			}
			r := newWorkload(t)
			if err := r.Prepare(ctx, conn); err != nil {
				t.Fatal(err)
			}
			if r.records != 3000 || r.base != 3000 {
				t.Errorf("prepared: records %d, rows %d", r.records, r.base)
			}
			if err := r.Check(ctx, conn); err != nil {
				t.Error(err)
			}
		})
	}
}
