package tpch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload/tpch/qgen"
)

// TestCitusAnswers loads scale 0.01 on a Citus coordinator with two
// workers in the default layout: check passes, all 22 validation queries
// match the answer set (Q17, Q20 and Q22 in their Citus forms), and RF1
// and RF2 run with the checks passing after each.
func TestCitusAnswers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := newWorkload(t, "--scale", "0.01", "--citus", "--shard-count", "4")
	dsn := loadertest.LoadedAt(t, w, pgtest.CitusDSN(t))
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var distributed, reference int
	if err := conn.QueryRow(ctx, "select count(*) filter (where partmethod = 'h'), count(*) filter (where partmethod = 'n') from pg_dist_partition").Scan(&distributed, &reference); err != nil {
		t.Fatal(err)
	}
	if distributed != 2 || reference != 7 {
		t.Fatalf("%d distributed and %d reference tables, want 2 and 7 (the reference layout)", distributed, reference)
	}
	w = newWorkload(t, "--answers")
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	err = w.Check(ctx, conn)
	if !passed(err) || !strings.Contains(err.Error(), "22 of 22") || !strings.Contains(err.Error(), "q17 q20 q22 in their Citus forms") {
		t.Fatalf("check --answers on Citus: %v", err)
	}
	w = newWorkload(t)
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if got := w.Params()["citus_forms"]; got != "q17 q20 q22" {
		t.Errorf("citus_forms = %q, want the rewritten queries recorded", got)
	}
	if err := w.RF1(ctx, conn); err != nil {
		t.Fatalf("rf1: %v", err)
	}
	if err := w.RF2(ctx, conn); err != nil {
		t.Fatalf("rf2: %v", err)
	}
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx, conn); err != nil {
		t.Fatalf("check after rf1, rf2: %v", err)
	}
}

// TestCitusFormsOnPostgres: the Citus forms of Q17, Q20 and Q22 return
// the answer set on plain PostgreSQL too (scale 0.01).
func TestCitusFormsOnPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, conn := loaded(t)
	want, _ := qgen.Answers(0.01)
	for _, n := range qgen.CitusForms() {
		sql, ok := qgen.CitusSQL(qgen.Validation(n, 0.01))
		if !ok {
			t.Fatalf("q%d has no Citus form", n)
		}
		got, err := textRows(ctx, conn, sql)
		if err != nil {
			t.Fatalf("q%d: %v", n, err)
		}
		if err := qgen.Check(n, got, want[n]); err != nil {
			t.Errorf("q%d's Citus form: %v", n, err)
		}
	}
}

// TestAnswersReportEvery: a failing check --answers names every query
// that failed and counts those that passed, not only the first.
func TestAnswersReportEvery(t *testing.T) {
	err := answersResult([]string{"q8 error: boom", "q17 wrong answer: row 1"}, false)
	if passed(err) || !strings.Contains(err.Error(), "20 of 22 queries pass; q8 error: boom; q17 wrong answer: row 1") {
		t.Errorf("answers with two failures: %v", err)
	}
}
