package postgres

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/store"
)

// TestMigrateFromVersion1: a database written by schema version 1 (runs
// and intervals as version 1 wrote them) is migrated when read: the runs
// read back as from their directory, the views of version 2 show them
// (intervals without a total row), and writing goes on at version 2.
func TestMigrateFromVersion1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	c := pgtest.Connect(t, dsn, pgx.QueryExecModeExec)
	if _, err := c.Exec(ctx, "CREATE SCHEMA "+Schema+"; COMMENT ON SCHEMA "+Schema+" IS '"+schemaMark+"'"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, migrations[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `UPDATE `+Schema+`.schema_version SET version = 1`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ids, err := reporttest.Write(dir, reporttest.Standard()[:2])
	if err != nil {
		t.Fatal(err)
	}
	st := store.OpenReadOnly(dir)
	for _, id := range ids { // as version 1's Publish wrote them
		r, err := st.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		var key int64
		if err := c.QueryRow(ctx, `INSERT INTO `+Schema+`.runs (host, run_id, workload, label, created, status, spec, server, summary)
			VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb) RETURNING id`, r.Spec.Host.Hostname, r.ID, r.Spec.Workload, r.Spec.Label,
			r.Spec.Created, r.Status, jsonText(t, r.Spec), jsonText(t, r.Server), jsonText(t, r.Summary)).Scan(&key); err != nil {
			t.Fatal(err)
		}
		for i := range r.Intervals {
			args := intervalArgs(key, &r.Intervals[i])
			if _, err := c.Exec(ctx, `INSERT INTO `+Schema+`.intervals (run, seq, start_at, end_at, warmup, step, data)
				VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)`, args[:7]...); err != nil {
				t.Fatal(err)
			}
		}
	}

	res, err := OpenResults(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var v int
	if err := c.QueryRow(ctx, `SELECT version FROM `+Schema+`.schema_version`).Scan(&v); err != nil || v != Version || Version != 2 {
		t.Fatalf("schema version %d after reading (%v), want %d = 2", v, err, Version)
	}
	for _, id := range ids {
		want, err := st.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := res.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		want.Dir = ""
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if string(w) != string(g) {
			t.Errorf("run %s reads differently after the migration", id)
		}
	}
	var runs, totals, typed int
	var tps float64
	if err := c.QueryRow(ctx, `SELECT count(*), min(tps) FROM `+Schema+`.runs_overview`).Scan(&runs, &tps); err != nil || runs != 2 || tps <= 0 {
		t.Errorf("runs_overview: %d runs, tps %v (%v)", runs, tps, err)
	}
	if err := c.QueryRow(ctx, `SELECT count(*) FILTER (WHERE type = 'total'), count(*) FILTER (WHERE type <> 'total' AND p99_ms > 0)
		FROM `+Schema+`.intervals_overview`).Scan(&totals, &typed); err != nil || totals != 0 || typed == 0 {
		t.Errorf("intervals_overview over version 1's intervals: %d total rows (want 0), %d per type (%v)", totals, typed, err)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
