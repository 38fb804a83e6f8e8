package session

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	pmetrics "github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/sysbench"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
)

// stackGuard is Go's stack guard on linux/amd64 (runtime.stackGuard): a
// function that would leave less than this below its frame grows the
// goroutine's stack first.
const stackGuard = 928

// blockedStacks is an output that, during a run, blocks every client in its
// statement (a lock on the table the statements read, taken at the 2nd
// interval, released at the 5th) and at the 4th interval measures the
// stack the goroutines use: the bytes the garbage collector scans
// (/gc/scan/stack:bytes, from each stack's top down to where the goroutine
// is parked), and how many goroutines there are. A client blocked in its statement is parked
// on its deepest path (the statement, pgconn's reader, chunkReader,
// poll.FD.RawRead, netio's read callback, the netpoller's wait).
type blockedStacks struct {
	t     *testing.T
	admin *pgx.Conn
	table string

	mu         sync.Mutex
	n          int
	used       uint64 // scanned stack bytes
	goroutines int
	tx         pgx.Tx
}

func (b *blockedStacks) Write(r Record) error {
	if r.Interval == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch b.n {
	case 2:
		tx, err := b.admin.Begin(ctx)
		if err == nil {
			_, err = tx.Exec(ctx, "lock table "+b.table+" in access exclusive mode")
		}
		if err != nil {
			b.t.Errorf("locking %s: %v", b.table, err)
			return nil
		}
		b.tx = tx
	case 4:
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/scan/stack:bytes"}}
		metrics.Read(s)
		b.used, b.goroutines = s[0].Value.Uint64(), runtime.NumGoroutine()
	case 5:
		if b.tx != nil {
			b.tx.Rollback(ctx)
			b.tx = nil
		}
	}
	return nil
}

// TestClientStackStaysSmall guards the size of a client goroutine's stack,
// the largest share of a client's memory at 10,000 clients (see
// docs/benchmarks.md, "Many clients: 1,000 and 10,000"). A goroutine's
// stack starts at 2 KB and doubles when a call would leave less than Go's
// guard below its frame. The clients of tpcb's scripts under -M simple
// (workload.SmallStacker) start at 2 KB and must stay there; the others
// are grown to 4 KB at their start, and their deepest stack is just under
// that step. One more frame on the path, or a larger one, doubles every
// client's stack. It runs 100 clients of tpcb select-only (the script
// engine) and sysbench point select under each query protocol, with every
// client blocked in its statement for a moment, and checks the stack each
// uses then, plus Go's guard, fits its size. It measures bytes, not time.
func TestClientStackStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts hundreds of connections")
	}
	if raceEnabled {
		t.Skip("measures the stacks of a build without -race (go test without -race)")
	}
	const clients = 100
	// The most stack in use per client at which its stack stays 4 KB: 4 KB
	// less Go's guard, give or take the frames of the park itself (~100
	// bytes, to the safe side). When this test was written: 2,420-2,550
	// bytes under -M simple, 2,720-3,070 under extended and prepared,
	// after the script engine and sysbench stopped copying pgx's
	// ConnConfig into a frame of every transaction (3,010-3,650 before:
	// 8 KB stacks under extended and prepared).
	const limit = 4096 - stackGuard
	// The same for a client that starts at 2 KB and stays there. A parked
	// goroutine's scan starts below runtime.gopark's frame, 24 bytes
	// deeper than gopark's entry, where the guard is checked: the stack
	// stays at 2 KB while gopark's entry is less than 2,048 - stackGuard
	// deep. 1,087-1,097 bytes when this limit was added (1,468 before,
	// on 4 KB stacks).
	const smallLimit = 2048 - stackGuard + 24 - 1
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
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	tpcbSelect := func() workload.Workload {
		w := tpcb.New()
		mustSet(t, w.Flags().Set("builtin", tpcb.ScriptSelectOnly))
		mustSet(t, w.Flags().Set("scale", "1"))
		mustSet(t, w.Validate())
		return w
	}
	pointSelect := func() workload.Workload {
		w := sysbench.New()
		mustSet(t, w.Flags().Set("table-size", "1000"))
		mustSet(t, w.SetArgs([]string{"oltp_point_select"}))
		mustSet(t, w.Validate())
		return w
	}
	for _, k := range []struct {
		name, table string
		make        func() workload.Workload
		small       bool // its clients start at 2 KB under -M simple
	}{{"tpcb-select-only", "pgbench_accounts", tpcbSelect, true}, {"sysbench-point-select", "sbtest1", pointSelect, false}} {
		run := func(clients int, qm string, init bool, out Output) pmetrics.Summary {
			t.Helper()
			spec := Spec{
				Groups:   []Group{{Workload: k.make(), Clients: clients, QueryMode: qm}},
				Duration: 1200 * time.Millisecond, Tick: 100 * time.Millisecond, Seed: 1,
				Init: init, LoadWorkers: 2, NetIO: netio.Default,
			}
			var outs []Output
			if out != nil {
				outs = append(outs, out)
			}
			res, err := Run(ctx, spec, prov, st, outs...)
			if err != nil {
				t.Fatalf("%s, %d clients, -M %s: %v", k.name, clients, qm, err)
			}
			return res.Summary
		}
		// Load the tables; one client, to measure what the rest of the
		// process uses.
		base := &blockedStacks{t: t, admin: admin, table: k.table}
		run(1, "simple", true, base)
		if base.goroutines == 0 {
			t.Fatalf("%s: no measurement during the one-client run", k.name)
		}
		for _, qm := range []string{"simple", "extended", "prepared"} {
			b := &blockedStacks{t: t, admin: admin, table: k.table}
			s := run(clients, qm, false, b)
			if s.Status != pmetrics.StatusComplete || s.Transactions == 0 || s.Failed != 0 {
				t.Fatalf("%s -M %s: status %s, %d transactions, %d failed", k.name, qm, s.Status, s.Transactions, s.Failed)
			}
			if b.goroutines < clients {
				t.Fatalf("%s -M %s: %d goroutines when measured, want the %d clients' at least", k.name, qm, b.goroutines, clients)
			}
			per := (b.used - base.used) / uint64(b.goroutines-base.goroutines)
			t.Logf("%s -M %s: %d stack bytes in use per client, blocked (%d bytes, %d goroutines; with one client %d, %d)",
				k.name, qm, per, b.used, b.goroutines, base.used, base.goroutines)
			if k.small && qm == "simple" {
				if per > smallLimit {
					t.Errorf("%s under -M simple: a client blocked in its statement uses %d bytes of goroutine stack; with Go's %d-byte guard\n"+
						"that is past the 2 KB a client's stack starts with (limit %d), so every client's stack doubles (2 to 4 KB: 20 MB more at\n"+
						"10,000 clients). Look for a frame added to, or grown on, the client's read path: driver's client.loop, the script's\n"+
						"DoPgConn and exec, roundtrip's roundTrip and readQuiet, netio's ReadMore and Read (go build -gcflags=-S shows each\n"+
						"function's frame size; a traceback with GOTRACEBACK=system shows each frame's sp).",
						k.name, per, stackGuard, smallLimit)
				}
				continue
			}
			if per > limit {
				t.Errorf("%s under -M %s: a client blocked in its statement uses %d bytes of goroutine stack; with Go's %d-byte guard\n"+
					"that is past a step of Go's stack sizes (limit %d), so every client's stack doubles (4 to 8 KB: 40 MB more at\n"+
					"10,000 clients; see docs/benchmarks.md, \"Many clients: 1,000 and 10,000\")).\n"+
					"Look for a frame added to, or grown on, the client's read path: the statement, pgconn's reader, chunkReader,\n"+
					"poll.FD.RawRead and netio's readFd (go build -gcflags=-S shows each function's frame size).",
					k.name, qm, per, stackGuard, limit)
			}
		}
	}
}

func mustSet(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
