package session

import (
	"context"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/sysbench"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
	"github.com/pgarena/pgarena/internal/workload/tpcc"
)

// TestDialerKeepsPgxCacheOnlyWhereUsed: under -M prepared a client
// connection of a workload that runs statements through pgconn only
// (workload.Meta.PgConnOnly: tpcb's script engine, sysbench) carries no pgx
// statement cache, one of tpcc (pgx.Conn's Exec and Query) does. The runs
// of those workloads under -M prepared (TestClientStackStaysSmall, their
// own packages' tests) show that nothing on their connections needs it.
func TestDialerKeepsPgxCacheOnlyWhereUsed(t *testing.T) {
	cfg, err := target.ParseDSN(pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{tgt: &target.Target{Config: cfg}, spec: Spec{NetIO: netio.Default}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, k := range []struct {
		w     workload.Workload
		cache bool
	}{{tpcb.New(), false}, {sysbench.New(), false}, {tpcc.New(), true}} {
		name := k.w.Meta().Name
		conn, err := r.dialer(&Group{Workload: k.w, QueryMode: "prepared"}, nil)(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := conn.Config().StatementCacheCapacity > 0; got != k.cache {
			t.Errorf("%s -M prepared: client connection has a pgx statement cache: %v, want %v", name, got, k.cache)
		}
		conn.Close(ctx)
	}
}
