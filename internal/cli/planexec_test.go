package cli

import (
	"context"
	"io"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
)

// plan run executes a cell from its configuration: no command tree is
// built for it. (Not parallel: the count is the test binary's.)
func TestPlanCellBuildsNoCommand(t *testing.T) {
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	ex := &planExec{a: &app{Main: Main{Env: cleanEnv()}}, results: results, out: io.Discard}
	before := rootsBuilt.Load()
	if _, err := ex.Check([]string{"tpcb", "-c", "2", "--dsn", dsn}); err != nil {
		t.Fatal(err)
	}
	id, err := ex.Run(context.Background(), []string{"tpcb", "-c", "2", "-t", "5", "--dsn", dsn}, store.PlanTag{Plan: "p", Cell: "c"})
	if err != nil || id == "" {
		t.Fatalf("run %q: %v", id, err)
	}
	if err := ex.Maintain(context.Background(), []string{"--dsn", dsn}, []string{"checkpoint"}); err != nil {
		t.Fatal(err)
	}
	if n := rootsBuilt.Load() - before; n != 0 {
		t.Fatalf("%d command trees built for a plan cell", n)
	}
}
