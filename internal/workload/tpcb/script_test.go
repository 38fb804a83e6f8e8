package tpcb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestBuiltinsEqualPgbench: the builtin scripts, run by the script engine
// at a fixed --random-seed, make the same history as pgbench itself
// (same accounts, tellers, branches and deltas, in the same order); a
// weighted mix of builtins chooses the same scripts in the same order.
func TestBuiltinsEqualPgbench(t *testing.T) {
	w := newWorkload(t)
	dsn := loadertest.Loaded(t, w)
	ctx := context.Background()
	conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	const n, seed = 100, 77
	history := func() []string {
		rows, err := conn.Query(ctx, "select format('%s %s %s %s', tid, bid, aid, delta) from pgbench_history order by ctid")
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, args := range [][]string{{"-b", ScriptTPCBLike}, {"-b", ScriptSimpleUpdate},
		{"-b", ScriptTPCBLike + "@1", "-b", ScriptSelectOnly + "@3"}} {
		if _, err := conn.Exec(ctx, "truncate pgbench_history"); err != nil {
			t.Fatal(err)
		}
		pgbench(t, append(args, "-n", "-t", fmt.Sprint(n), "-c", "1", "--random-seed", fmt.Sprint(seed), dsn)...)
		want := history()
		if _, err := conn.Exec(ctx, "truncate pgbench_history"); err != nil {
			t.Fatal(err)
		}
		w := newWorkload(t, args...)
		w.SetSeed(seed)
		if err := w.ValidateRun(1); err != nil {
			t.Fatal(err)
		}
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		wk := w.NewWorker(0, rand.New(rand.NewPCG(1, 2)))
		for i := 0; i < n; i++ {
			if err := wk.Do(ctx, conn, wk.Next()); err != nil {
				t.Fatal(err)
			}
		}
		got := history()
		if len(args) == 2 && len(want) != n || len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%v: pgarena's history (%d rows) differs from pgbench's (%d):\npgbench %v\npgarena %v", args, len(got), len(want),
				want[:min(3, len(want))], got[:min(3, len(got))])
		}
	}
}

// TestFileMixesWithBuiltins: -f beside -b, weights, :scale, :client_id
// and -D.
func TestFileMixesWithBuiltins(t *testing.T) {
	w := newWorkload(t, "-b", "select-only@1", "-f", "testdata/vars.sql@3", "-D", "extra=7")
	if got := w.TxTypes(); !slices.Equal(got, []string{"select-only", "vars"}) {
		t.Fatalf("TxTypes = %v", got)
	}
	dsn := loadertest.Loaded(t, w)
	ctx := context.Background()
	for _, mode := range modes {
		conn := pgtest.Connect(t, dsn, mode)
		if _, err := conn.Exec(ctx, "drop table if exists vars_seen; create table vars_seen (scale int, client_id int, extra int)"); err != nil {
			t.Fatal(err)
		}
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		wk := w.NewWorker(2, rand.New(rand.NewPCG(1, 2)))
		counts := map[int]int{}
		for i := 0; i < 200; i++ {
			tx := wk.Next()
			counts[int(tx)]++
			if err := wk.Do(ctx, conn, tx); err != nil {
				t.Fatal(err)
			}
		}
		if counts[1] < 120 || counts[1] > 180 {
			t.Errorf("%v: weights 1:3 chose %v", mode, counts)
		}
		var scale, client, extra, rows int
		if err := conn.QueryRow(ctx, "select min(scale), min(client_id), min(extra), count(*) from vars_seen").Scan(&scale, &client, &extra, &rows); err != nil {
			t.Fatal(err)
		}
		if scale != 1 || client != 2 || extra != 7 || rows != counts[1] {
			t.Errorf("%v: scale %d client_id %d extra %d rows %d (%d runs)", mode, scale, client, extra, rows, counts[1])
		}
	}
}
