package session

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	pmetrics "github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
)

// connectCounter counts the pgx.Conns built with its configuration
// (pgx.ConnectTracer: pgx.ConnectConfig calls it, pgconn alone does not).
type connectCounter struct{ n atomic.Int64 }

func (c *connectCounter) TraceConnectStart(ctx context.Context, _ pgx.TraceConnectStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *connectCounter) TraceConnectEnd(context.Context, pgx.TraceConnectEndData) {}
func (c *connectCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (c *connectCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestLeanRunBuildsNoPgxConn: a run whose workloads are all PgConnOnly
// (tpcb select-only here) on an initialised database, checks included,
// builds no pgx.Conn: not to reach the server, not for its control
// connection (describe, prepare, checks: a *pgtext.Conn), not for its
// clients. The first pgx.Conn builds pgtype's default type map, whose
// code pages and heap are most of what such a run would add.
func TestLeanRunBuildsNoPgxConn(t *testing.T) {
	dsn := pgtest.DSN(t)
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(init bool) int64 {
		t.Helper()
		cfg, err := target.ParseDSN(dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		counter := &connectCounter{}
		cfg.Tracer = counter
		w := tpcb.New()
		mustSet(t, w.Flags().Set("builtin", tpcb.ScriptSelectOnly))
		mustSet(t, w.Flags().Set("scale", "1"))
		mustSet(t, w.Validate())
		spec := Spec{
			Groups:       []Group{{Workload: w, Clients: 1, QueryMode: "simple"}},
			Transactions: 20, Tick: 100 * time.Millisecond, Seed: 1, Check: true,
			Init: init, LoadWorkers: 2, NetIO: netio.Default,
		}
		res, err := Run(ctx, spec, &target.DSN{Config: cfg}, st)
		if err != nil {
			t.Fatal(err)
		}
		if s := res.Summary; s.Status != pmetrics.StatusComplete || s.Transactions == 0 || s.Failed != 0 {
			t.Fatalf("status %s, %d transactions, %d failed", s.Status, s.Transactions, s.Failed)
		}
		if len(res.Checks) != 1 || res.Checks[0].Err != nil || res.Checks[0].Skipped {
			t.Fatalf("checks: %+v", res.Checks)
		}
		return counter.n.Load()
	}
	run(true) // the load is allowed its pgx.Conns
	if n := run(false); n != 0 {
		t.Errorf("a tpcb select-only run built %d pgx.Conn, want none (target.WaitReadyText, run.connect)", n)
	}
}
