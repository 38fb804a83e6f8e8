package cli

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
)

// ycsb d with --agents 2: the segments insert disjoint keys (no 23505),
// and the table grows by the merged run's committed inserts.
func TestAgentsYCSBInsertDisjointKeys(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "ycsb", "--records", "1000", "--dsn", dsn)
	results := t.TempDir()
	env := append(cleanEnv(), cliMainEnv+"=1")
	// 100 transactions (not a time) from the default seed: at 50% inserts
	// the check below that some committed cannot fail by chance.
	r := pgarena(t, env, "run", "ycsb", "--workload", "d", "--insert-proportion", "0.5", "--read-proportion", "0.5",
		"-c", "4", "-t", "25", "--interval", "500ms", "-P", "0", "--agents", "2", "--dsn", dsn, "--results", results)
	if r.code != 0 {
		t.Fatalf("run --agents 2:\n%s", r)
	}
	merged, err := store.OpenReadOnly(results).Load("last")
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Spec.MergedFrom) != 2 || merged.Summary.Failed != 0 {
		t.Fatalf("merged from %v, %d failed: %v", merged.Spec.MergedFrom, merged.Summary.Failed, merged.Summary.Errors)
	}
	var inserted int64
	for _, ts := range merged.Summary.Tx {
		if ts.Name == "insert" {
			inserted = ts.Transactions + ts.CommittedInDrain // those after the measured time are in the table too
		}
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows int64
	if err := conn.QueryRow(context.Background(), "select count(*) from usertable").Scan(&rows); err != nil || inserted == 0 || rows != 1000+inserted {
		t.Fatalf("%d rows (%v), want 1000 loaded + %d inserted", rows, err, inserted)
	}
}
