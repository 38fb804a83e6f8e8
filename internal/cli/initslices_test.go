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
