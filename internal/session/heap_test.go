package session

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	pmetrics "github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
)

// heapAtStart is tpcb whose figures' first snapshot, taken once the
// clients are connected and before they start (driver.Config.BeforeStart),
// collects garbage and reads the live heap.
type heapAtStart struct {
	*tpcb.Workload
	live uint64
}

func (h *heapAtStart) Snapshot(context.Context, pgtext.Querier) (map[string]float64, error) {
	if h.live == 0 {
		// twice: sync.Pool's buffers (pgx's iobufpool) last two cycles
		runtime.GC()
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		h.live = s[0].Value.Uint64()
	}
	return nil, nil
}

func (h *heapAtStart) Figures(workload.FigureWindow) []workload.Figure { return nil }

// TestClientHeapStaysSmall guards a client's share of the heap, the
// largest part of its memory beside its 4 KB stack (see docs/benchmarks.md,
// "Many clients"): tpcb select-only under -M simple, 100 clients against
// one, connected, before their first transaction. Most of it is pgconn's: the connection, its protocol frontend, its
// 8 KB read buffer (of which only the first 4 KB page is ever written for
// small answers, so resident) and the server's parameter statuses. A
// pgx.Conn around it (its type map, write buffer, copy of the
// configuration: ~2.4 KB) is what workload.PgConnWorker's clients go
// without. It measures bytes, not time.
func TestClientHeapStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a hundred connections")
	}
	if raceEnabled {
		t.Skip("-race's shadow state is in the heap")
	}
	const clients = 100
	// 15.2 KB when written; 18.1 KB with a pgx.Conn per client.
	const limit = 16 << 10
	dsn := pgtest.DSN(t)
	cfg, err := target.ParseDSN(dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	prov := &target.DSN{Config: cfg}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(n int, init bool) uint64 {
		t.Helper()
		h := &heapAtStart{Workload: tpcb.New()}
		mustSet(t, h.Flags().Set("builtin", tpcb.ScriptSelectOnly))
		mustSet(t, h.Flags().Set("scale", "1"))
		mustSet(t, h.Validate())
		spec := Spec{
			Groups:   []Group{{Workload: h, Clients: n, QueryMode: "simple"}},
			Duration: 800 * time.Millisecond, Tick: 100 * time.Millisecond, Seed: 1,
			Init: init, LoadWorkers: 2, NetIO: netio.Default,
		}
		res, err := Run(ctx, spec, prov, st)
		if err != nil {
			t.Fatalf("%d clients: %v", n, err)
		}
		if s := res.Summary; s.Status != pmetrics.StatusComplete || s.Transactions == 0 || s.Failed != 0 || h.live == 0 {
			t.Fatalf("%d clients: status %s, %d transactions, %d failed, live heap %d", n, s.Status, s.Transactions, s.Failed, h.live)
		}
		return h.live
	}
	base := run(1, true)
	many := run(clients, false)
	per := (many - base) / (clients - 1)
	t.Logf("%d bytes of live heap per client (%d with %d clients, %d with one)", per, many, clients, base)
	if per > limit {
		t.Errorf("a client's share of the live heap is %d bytes, more than %d: look for per-client state that grew\n"+
			"(go test -memprofile, or pprof's inuse_space of a run at 1,000 clients), or a pgx.Conn that came back\n"+
			"for a workload.PgConnWorker's clients", per, limit)
	}
}
