package tpcb

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

// newWorkload returns a tpcb workload with args parsed and validated.
func newWorkload(t testing.TB, args ...string) *Workload {
	t.Helper()
	return loadertest.Configured(t, New(), args...)
}

func TestRegistered(t *testing.T) {
	if m := Meta; m.Name != "tpcb" || m.Description != "TPC-B-like, pgbench compatible" {
		t.Fatalf("tpcb's Meta: %+v", m)
	}
	if got := Meta.New().TxTypes(); len(got) != 1 || got[0] != "tpcb-like" {
		t.Errorf("default TxTypes = %v", got)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string // "" for valid
		tx   string
	}{
		{nil, "", "tpcb-like"},
		{[]string{"-s", "0"}, "scale must be at least 1 (got 0)", ""},
		{[]string{"--fillfactor", "9"}, "fillfactor must be between 10 and 100 (got 9)", ""},
		{[]string{"--fillfactor", "101"}, "fillfactor must be between 10 and 100 (got 101)", ""},
		{[]string{"--partitions", "-1"}, "partitions must not be negative (got -1)", ""},
		{[]string{"-S"}, "", "select-only"},
		{[]string{"-N"}, "", "simple-update"},
		{[]string{"-b", "simple"}, "", "simple-update"},
		{[]string{"-b", "select-only", "-S"}, "", "select-only"},
		{[]string{"-S", "-N"}, "", "select-only simple-update"},
		{[]string{"-b", "tpcb-like", "-N"}, "", "tpcb-like simple-update"},
		{[]string{"-b", "tpcb-like@0"}, "total script weight must not be zero", ""},
		{[]string{"-b", "tpcb-like@x"}, "invalid weight specification: tpcb-like@x", ""},
		{[]string{"-f", "testdata/nope.sql"}, "script testdata/nope.sql: open testdata/nope.sql: no such file or directory", ""},
		{[]string{"-b", "s"}, `ambiguous builtin script "s" (matches simple-update, select-only)`, ""},
		{[]string{"-b", "nope"}, `no builtin script "nope" (available: tpcb-like, simple-update, select-only)`, ""},
		{[]string{"-b", "tpcb-like@2", "-b", "select-only@8"}, "", "tpcb-like select-only"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			w := New()
			if err := w.Flags().Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := w.Validate()
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Fatalf("Validate = %v, want %q", err, tc.err)
			}
			if tc.tx != "" {
				if got := w.TxTypes(); strings.Join(got, " ") != tc.tx {
					t.Errorf("TxTypes = %v, want [%s]", got, tc.tx)
				}
				if w.Params()["script"] != tc.tx {
					t.Errorf("Params script = %q", w.Params()["script"])
				}
			}
		})
	}
}

// TestFingerprint guards the determinism of the generated data: a change
// here changes what every tpcb database contains.
func TestFingerprint(t *testing.T) {
	w := newWorkload(t, "-s", "2")
	h := sha256.New()
	var rows int64
	for _, tb := range w.Tables() {
		fmt.Fprintf(h, "%s %v\n", tb.Name, tb.Columns)
		var dst [][]any
		for i := 0; i < tb.Rows.N; i++ {
			dst = tb.Rows.Fill(i, dst)
			for _, r := range dst {
				fmt.Fprintf(h, "%#v\n", r)
			}
			rows += int64(len(dst))
		}
	}
	if want := int64(2 + 20 + 200000); rows != want {
		t.Errorf("rows = %d, want %d", rows, want)
	}
	const want = "e0b11d9da533cbdbbcc5612c9f0c336c70db6145c46e0a1c35974ddeeb4ed733"
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("fingerprint = %s, want %s", got, want)
	}
}

func TestRowCounts(t *testing.T) {
	for _, scale := range []int{1, 2} {
		t.Run(fmt.Sprint(scale), func(t *testing.T) {
			w := newWorkload(t, "-s", fmt.Sprint(scale))
			conn := pgtest.Connect(t, loadertest.Loaded(t, w), pgx.QueryExecModeSimpleProtocol)
			ctx := context.Background()
			for table, want := range map[string]int{
				"pgbench_branches": scale, "pgbench_tellers": 10 * scale,
				"pgbench_accounts": 100000 * scale, "pgbench_history": 0,
			} {
				var n int
				if err := conn.QueryRow(ctx, "select count(*) from "+table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != want {
					t.Errorf("%s has %d rows, want %d", table, n, want)
				}
			}
			if err := w.Check(ctx, conn); err != nil {
				t.Errorf("Check after init: %v", err)
			}
		})
	}
}

// pgbench runs the pgbench next to the test cluster's server.
func pgbench(t *testing.T, args ...string) string {
	t.Helper()
	dir := pgtest.Cluster(t).Binaries().Dir
	path := filepath.Join(dir, "pgbench")
	if _, err := exec.LookPath(path); err != nil {
		if path, err = exec.LookPath("pgbench"); err != nil {
			msg := fmt.Sprintf("pgbench not found next to the server (in %s) or on PATH: install it (scripts/install-deps.sh)", dir)
			if pgtest.Required() {
				t.Fatalf("%s; %s=1 makes this a failure", msg, pgtest.RequireEnv)
			}
			t.Skipf("%s; skipping (%s=1 fails instead)", msg, pgtest.RequireEnv)
		}
	}
	out, err := exec.Command(path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pgbenchMajor is the major version of the pgbench that pgbench runs.
func pgbenchMajor(t *testing.T) int {
	t.Helper()
	out := pgbench(t, "--version") // "pgbench (PostgreSQL) 18.6"
	f := strings.Fields(out)
	if len(f) < 3 {
		t.Fatalf("pgbench --version: %q", out)
	}
	major, err := strconv.Atoi(strings.Split(f[2], ".")[0])
	if err != nil {
		t.Fatalf("pgbench --version: %q", out)
	}
	return major
}

// describe returns what must be equal between a pgbench database and a
// pgarena one: columns, storage options, constraints, partitions and the
// data itself.
func describe(t *testing.T, dsn string) map[string][]string {
	t.Helper()
	conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	out := map[string][]string{}
	for name, q := range map[string]string{
		"columns": `select table_name, ordinal_position, column_name, data_type,
				coalesce(character_maximum_length, 0), is_nullable, coalesce(column_default, '')
			from information_schema.columns where table_name like 'pgbench%' order by 1, 2`,
		"relations": `select relname, relkind, relpersistence, coalesce(reloptions::text, ''),
				coalesce(pg_get_expr(relpartbound, oid), '')
			from pg_class where relname like 'pgbench%' order by 1`,
		"constraints": `select conname, conrelid::regclass, contype, pg_get_constraintdef(oid)
			from pg_constraint where conrelid::regclass::text like 'pgbench%' order by 1, 2`,
		"data": `select 'accounts', md5(string_agg(a::text, ',' order by aid)) from pgbench_accounts a
			union all select 'tellers', md5(string_agg(t::text, ',' order by tid)) from pgbench_tellers t
			union all select 'branches', md5(string_agg(b::text, ',' order by bid)) from pgbench_branches b
			union all select 'history', count(*)::text from pgbench_history`,
	} {
		rows, err := conn.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			out[name] = append(out[name], fmt.Sprint(vals...))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return out
}

func TestSchemaMatchesPgbench(t *testing.T) {
	for _, tc := range []struct {
		ours, theirs []string
	}{
		{nil, nil},
		{[]string{"--fillfactor", "90"}, []string{"-F", "90"}},
		{[]string{"--partitions", "3", "--unlogged"}, []string{"--partitions", "3", "--unlogged-tables"}},
		{[]string{"--partitions", "2", "--fillfactor", "80"}, []string{"--partitions", "2", "-F", "80"}},
	} {
		t.Run(strings.Join(tc.ours, " "), func(t *testing.T) {
			if slices.Contains(tc.ours, "--unlogged") && slices.Contains(tc.ours, "--partitions") {
				// pgarena follows the pgbench of the server's version here
				// (18 changed it); a version lane may pair other versions.
				if pb, srv := pgbenchMajor(t), pgtest.Cluster(t).Binaries().Major; (pb >= 18) != (srv >= 18) {
					t.Skipf("pgbench %d and PostgreSQL %d make different --unlogged --partitions schemas", pb, srv)
				}
			}
			theirs := pgtest.DSN(t)
			pgbench(t, append(append([]string{"-i", "-q", "-s", "1"}, tc.theirs...), theirs)...)
			ours := loadertest.Loaded(t, newWorkload(t, tc.ours...))
			want, got := describe(t, theirs), describe(t, ours)
			for _, k := range []string{"columns", "relations", "constraints", "data"} {
				if g, w := strings.Join(got[k], "\n"), strings.Join(want[k], "\n"); g != w || g == "" {
					t.Errorf("%s differ from pgbench -i:\npgarena:\n%s\npgbench:\n%s", k, g, w)
				}
			}
		})
	}
}

// TestBigintDDL checks pgbench's switch to bigint keys at scale 20000
// without loading 2 billion rows.
func TestBigintDDL(t *testing.T) {
	for scale, want := range map[int]string{19999: "aid int not null", 20000: "aid bigint not null"} {
		w := newWorkload(t, "-s", fmt.Sprint(scale))
		var ddl string
		for _, tb := range w.Tables() {
			ddl += strings.Join(tb.Create, ";") + ";"
		}
		if !strings.Contains(ddl, want) {
			t.Errorf("scale %d: DDL lacks %q: %s", scale, want, ddl)
		}
		if scale >= 20000 && !strings.Contains(ddl, "aid bigint,delta") {
			t.Errorf("scale %d: pgbench_history.aid is not bigint: %s", scale, ddl)
		}
	}
	var dst [][]any
	w := newWorkload(t, "-s", "20000")
	for _, tb := range w.Tables() {
		if tb.Name == "pgbench_accounts" {
			dst = tb.Rows.Fill(tb.Rows.N-1, dst)
			if r := dst[len(dst)-1]; r[0] != int64(2000000000) || r[1] != int32(20000) {
				t.Errorf("last account row = %v", r)
			}
		}
	}
}

var modes = []pgx.QueryExecMode{
	pgx.QueryExecModeSimpleProtocol,
	pgx.QueryExecModeExec,
	pgx.QueryExecModeCacheStatement,
}

// run runs n transactions of the script chosen by args on conn.
func run(t *testing.T, conn *pgx.Conn, n int, args ...string) {
	t.Helper()
	w := newWorkload(t, args...)
	if err := w.Prepare(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	wk := w.NewWorker(0, rand.New(rand.NewPCG(1, 2)))
	for range n {
		if err := wk.Do(context.Background(), conn, wk.Next()); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
}

func TestScriptsKeepConsistency(t *testing.T) {
	w := newWorkload(t)
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			dsn := loadertest.Loaded(t, w)
			conn := pgtest.Connect(t, dsn, mode)
			ctx := context.Background()
			run(t, conn, 200)
			run(t, conn, 200, "-S")
			var hist int
			if err := conn.QueryRow(ctx, "select count(*) from pgbench_history").Scan(&hist); err != nil || hist != 200 {
				t.Fatalf("pgbench_history has %d rows (%v), want 200", hist, err)
			}
			if err := w.Check(ctx, conn); err != nil {
				t.Fatalf("Check after tpcb-like and select-only: %v", err)
			}
			run(t, conn, 200, "-N")
			err := w.Check(ctx, conn)
			var skipped *SkippedUpdatesError
			if !errors.As(err, &skipped) || errors.As(err, new(*workload.CheckNote)) {
				t.Fatalf("Check after simple-update = %v, want a *SkippedUpdatesError", err)
			}
			if err := newWorkload(t, "-N").Check(ctx, conn); !errors.As(err, &skipped) || !errors.As(err, new(*workload.CheckNote)) {
				t.Fatalf("Check -N after simple-update = %v, want an expected *SkippedUpdatesError", err)
			}
			// a second connection of the same mode sees the same data
			// after tpcb-like again: still only the skipped updates
			run(t, pgtest.Connect(t, dsn, mode), 50, "-b", "tpcb-like")
			if err := w.Check(ctx, conn); !errors.As(err, &skipped) {
				t.Fatalf("Check = %v, want a *SkippedUpdatesError", err)
			}
		})
	}
}

func TestErrorRollsBack(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			w := newWorkload(t)
			conn := pgtest.Connect(t, loadertest.Loaded(t, w), mode)
			ctx := context.Background()
			wk := w.NewWorker(0, rand.New(rand.NewPCG(3, 4)))
			if err := wk.Do(ctx, conn, 0); err != nil {
				t.Fatal(err)
			}
			// the last statement before END fails
			if _, err := conn.Exec(ctx, "alter table pgbench_history add check (delta > 10000) not valid"); err != nil {
				t.Fatal(err)
			}
			err := wk.Do(ctx, conn, 0)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
				t.Fatalf("Do = %v, want a check violation", err)
			}
			if !strings.Contains(err.Error(), "INSERT INTO pgbench_history") {
				t.Errorf("error does not name the statement: %v", err)
			}
			if s := conn.PgConn().TxStatus(); s != 'I' {
				t.Fatalf("transaction status after error = %c, want idle", s)
			}
			if err := w.Check(ctx, conn); err != nil {
				t.Errorf("Check after a failed transaction: %v", err)
			}
		})
	}
}

func TestCancelledDoLeavesNoTransaction(t *testing.T) {
	w := newWorkload(t)
	dsn := loadertest.Loaded(t, w)
	conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	locker := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	// hold every branch so the worker blocks on its branch update
	if _, err := locker.Exec(ctx, "begin; lock table pgbench_branches in exclusive mode"); err != nil {
		t.Fatal(err)
	}
	wk := w.NewWorker(0, rand.New(rand.NewPCG(5, 6)))
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := wk.Do(cctx, conn, 0)
	if err == nil {
		t.Fatal("Do succeeded under a lock")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Do took %v to give up", d)
	}
	if !conn.PgConn().IsClosed() && conn.PgConn().TxStatus() != 'I' {
		t.Fatalf("connection left in transaction (%c)", conn.PgConn().TxStatus())
	}
	if _, err := locker.Exec(ctx, "rollback"); err != nil {
		t.Fatal(err)
	}
}

func TestPrepare(t *testing.T) {
	ctx := context.Background()
	t.Run("empty database", func(t *testing.T) {
		conn := pgtest.Connect(t, pgtest.DSN(t), pgx.QueryExecModeSimpleProtocol)
		err := newWorkload(t).Prepare(ctx, conn)
		want := "database is not initialised for tpcb (table pgbench_branches is missing): run `pgarena init tpcb` first"
		if err == nil || err.Error() != want {
			t.Fatalf("Prepare = %v, want %q", err, want)
		}
	})
	t.Run("scale from the database", func(t *testing.T) {
		conn := pgtest.Connect(t, loadertest.Loaded(t, newWorkload(t, "-s", "2", "--partitions", "2")), pgx.QueryExecModeSimpleProtocol)
		w := newWorkload(t, "-s", "5")
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		p := w.Params()
		if p["scale"] != "2" || p["partitions"] != "2" || !strings.Contains(p["note"], "--scale 5 ignored") {
			t.Errorf("Params after Prepare = %v", p)
		}
		w = newWorkload(t)
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if p := w.Params(); p["scale"] != "2" || p["note"] != "" {
			t.Errorf("Params after Prepare without --scale = %v", p)
		}
	})
	// The run records what the database has, not the flags' defaults.
	for _, args := range [][]string{{"--fillfactor", "90"}, {"--fillfactor", "85", "--partitions", "3", "--unlogged"}} {
		t.Run(fmt.Sprint("storage from the database ", args), func(t *testing.T) {
			loaded := newWorkload(t, args...)
			conn := pgtest.Connect(t, loadertest.Loaded(t, loaded), pgx.QueryExecModeSimpleProtocol)
			w := newWorkload(t)
			if err := w.Prepare(ctx, conn); err != nil {
				t.Fatal(err)
			}
			got, want := w.Params(), loaded.Params()
			for _, k := range []string{"scale", "fillfactor", "partitions", "unlogged"} {
				if got[k] != want[k] {
					t.Errorf("Params after Prepare: %s = %q, want the database's %q (%v)", k, got[k], want[k], got)
				}
			}
			w = newWorkload(t, "--fillfactor", "70")
			if err := w.Prepare(ctx, conn); err != nil {
				t.Fatal(err)
			}
			if p := w.Params(); p["fillfactor"] != want["fillfactor"] || !strings.Contains(p["note"], "--fillfactor 70 ignored") {
				t.Errorf("Params after Prepare with --fillfactor 70 = %v", p)
			}
		})
	}
}

func TestPgbenchRunsOnPgarenaDatabase(t *testing.T) {
	w := newWorkload(t)
	dsn := loadertest.Loaded(t, w)
	out := pgbench(t, "-n", "-T", "2", "-c", "2", dsn)
	if !strings.Contains(out, "number of failed transactions: 0") && !strings.Contains(out, "tps") {
		t.Errorf("pgbench output: %s", out)
	}
	conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	if err := w.Prepare(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(context.Background(), conn); err != nil {
		t.Errorf("Check after pgbench: %v", err)
	}
}
