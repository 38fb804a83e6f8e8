package chbench

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestCitusQueries loads 1 warehouse on plain PostgreSQL and on a Citus
// coordinator with two workers and runs the 22 queries on both, on
// Citus through the analytic group's connection setup (repartition
// joins on): all 22 run there and return the rows plain PostgreSQL
// returns; the transactional group's connections keep Citus's defaults.
func TestCitusQueries(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: about 3 minutes (Q7's repartition joins)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	citusDSN := pgtest.CitusDSN(t) // first: skips where Citus is absent
	plain := connectTo(t, loadertest.Loaded(t, newWorkload(t, "--warehouses", "1")))
	w := newWorkload(t, "--warehouses", "1", "--oltp-clients", "1", "--olap-clients", "1")
	citus := connectTo(t, loadertest.LoadedAt(t, w, citusDSN))
	if err := w.Prepare(ctx, citus); err != nil {
		t.Fatal(err)
	}
	if p := w.Params()["olap_session_citus"]; p != "citus.enable_repartition_joins=on" {
		t.Errorf("olap_session_citus = %q", p)
	}
	groups := w.Groups()
	if err := groups[0].Workload.(*part).SetupConn(ctx, citus); err != nil {
		t.Fatal(err)
	}
	var setting string
	if err := citus.QueryRow(ctx, "show citus.enable_repartition_joins").Scan(&setting); err != nil || setting != "off" {
		t.Fatalf("oltp connection: citus.enable_repartition_joins %q (%v), want off", setting, err)
	}
	if err := groups[1].Workload.(*part).SetupConn(ctx, citus); err != nil {
		t.Fatal(err)
	}
	for _, q := range Queries() {
		want, err := sortedRows(ctx, plain, q.SQL)
		if err != nil {
			t.Fatalf("%s on PostgreSQL: %v", q.Name, err)
		}
		start := time.Now()
		got, err := sortedRows(ctx, citus, q.SQL)
		if err != nil {
			t.Errorf("%s on Citus: %v", q.Name, err)
			continue
		}
		t.Logf("%s: %d rows in %v", q.Name, len(got), time.Since(start).Round(time.Millisecond))
		if !sameRows(got, want) {
			t.Errorf("%s: Citus returned %d rows, PostgreSQL %d, or other values (first: %v vs %v)", q.Name, len(got), len(want), first(got), first(want))
		}
	}
}

func connectTo(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// sortedRows is the query's rows as text, sorted (row order is compared
// by neither: several queries order by a column with ties).
func sortedRows(ctx context.Context, conn *pgx.Conn, sql string) ([]string, error) {
	rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var cells []string
		for _, v := range rows.RawValues() {
			cells = append(cells, string(v))
		}
		out = append(out, strings.Join(cells, "|"))
	}
	slices.Sort(out)
	return out, rows.Err()
}

// sameRows compares rows cell by cell, numbers within a relative 1e-9
// (a mean's last digits depend on the order of the sum).
func sameRows(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ca, cb := strings.Split(a[i], "|"), strings.Split(b[i], "|")
		if len(ca) != len(cb) {
			return false
		}
		for j := range ca {
			if ca[j] == cb[j] {
				continue
			}
			x, err1 := strconv.ParseFloat(ca[j], 64)
			y, err2 := strconv.ParseFloat(cb[j], 64)
			if err1 != nil || err2 != nil || math.Abs(x-y) > 1e-9*math.Max(math.Abs(x), math.Abs(y)) {
				return false
			}
		}
	}
	return true
}

func first(rows []string) string {
	if len(rows) == 0 {
		return "(none)"
	}
	return rows[0]
}
