package workload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

// TestCitusRefusesWorker: init's Citus check accepts the coordinator and
// refuses a worker node in one line.
func TestCitusRefusesWorker(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.CitusDSN(t)
	for _, c := range []struct {
		dsn, err string
	}{{dsn, ""}, {pgtest.CitusWorkerDSN(t, dsn, 0), "the target is a Citus worker node, not the coordinator"}} {
		conn, err := pgx.Connect(ctx, c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		has, err := workload.Citus(ctx, conn, "tpcc", true)
		conn.Close(ctx)
		if c.err == "" && (!has || err != nil) {
			t.Errorf("coordinator: %v, %v", has, err)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("worker: %v, want one line saying %q", err, c.err)
		}
	}
}
