package cli

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestInitSysbenchInSlices: three loaders of init --segment i/3 (as the
// pods of pgarena k8s init run) load exactly the rows one init loads, the
// last builds the keys, and check passes.
func TestInitSysbenchInSlices(t *testing.T) {
	t.Parallel()
	whole, sliced := pgtest.DSN(t), pgtest.DSN(t)
	args := []string{"--tables", "2", "--table-size", "25000", "--load-workers", "2"}
	mustRun(t, append([]string{"init", "sysbench", "--dsn", whole}, args...)...)
	for i := 0; i < 3; i++ {
		mustRun(t, append([]string{"init", "sysbench", "--dsn", sliced, "--segment", strconv.Itoa(i) + "/3"}, args...)...)
	}
	mustRun(t, "check", "sysbench", "--dsn", sliced)
	fingerprint := func(dsn string) string {
		conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
		defer conn.Close(context.Background())
		var fp string
		if err := conn.QueryRow(context.Background(), `select md5(string_agg(md5(t::text), '' order by tbl, id))
			from (select 1 tbl, * from sbtest1 union all select 2, * from sbtest2) t`).Scan(&fp); err != nil {
			t.Fatal(err)
		}
		return fp
	}
	if a, b := fingerprint(whole), fingerprint(sliced); a != b {
		t.Fatalf("sliced load differs from one init: %s vs %s", b, a)
	}
	r := pgarena(t, nil, "init", "sysbench", "--dsn", sliced, "--segment", "0/9", "--tables", "1", "--table-size", "25000")
	wantUsage(t, r, "at most 3 pods")
}

// TestInitTPCHInSlices: three loaders of init tpch --segment i/3 load
// exactly the rows one init loads (an md5 per table), small tables and
// tpch_state by slice 0 only, a slice loaded again replaces its rows, the
// last builds the keys, and check passes; then, the foreign keys built, a
// slice is refused.
func TestInitTPCHInSlices(t *testing.T) {
	t.Parallel()
	whole, sliced := pgtest.DSN(t), pgtest.DSN(t)
	args := []string{"--scale", "0.01", "--load-workers", "2"}
	mustRun(t, append([]string{"init", "tpch", "--dsn", whole}, args...)...)
	for _, seg := range []string{"0/3", "1/3", "1/3", "2/3"} {
		mustRun(t, append([]string{"init", "tpch", "--dsn", sliced, "--segment", seg}, args...)...)
	}
	mustRun(t, "check", "tpch", "--dsn", sliced)
	md5s := func(dsn string) map[string]string {
		conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
		defer conn.Close(context.Background())
		out := map[string]string{}
		for _, tbl := range []string{"nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem", "tpch_state"} {
			var sum string
			if err := conn.QueryRow(context.Background(),
				"select md5(string_agg(t::text, E'\\n' order by t::text)) from "+tbl+" t").Scan(&sum); err != nil {
				t.Fatal(err)
			}
			out[tbl] = sum
		}
		return out
	}
	a, b := md5s(whole), md5s(sliced)
	for tbl, sum := range a {
		if b[tbl] != sum {
			t.Errorf("table %s: sliced load's md5 %s, one init's %s", tbl, b[tbl], sum)
		}
	}
	r := pgarena(t, nil, "init", "tpch", "--dsn", sliced, "--segment", "0/16", "--scale", "0.01")
	wantUsage(t, r, "at most 15 pods")
	// the foreign keys built, a slice's rows are the others' references
	r = pgarena(t, nil, "init", "tpch", "--dsn", sliced, "--segment", "1/3", "--scale", "0.01")
	wantUsage(t, r, "pgarena drop tpch first")
}
