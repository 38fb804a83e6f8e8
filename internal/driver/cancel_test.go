package driver

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// cancelCode opens a CancelRequest message (protocol, "CancelRequest").
const cancelCode = 80877102

// cancelWatch is a connection that tells delivered when the server has
// closed it after a CancelRequest, i.e. has signalled the backend.
type cancelWatch struct {
	net.Conn
	isCancel  atomic.Bool
	delivered chan<- struct{}
}

func (c *cancelWatch) Write(b []byte) (int, error) {
	if len(b) >= 8 && binary.BigEndian.Uint32(b[4:8]) == cancelCode {
		c.isCancel.Store(true)
	}
	return c.Conn.Write(b)
}

func (c *cancelWatch) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil && c.isCancel.Load() {
		select {
		case c.delivered <- struct{}{}:
		default:
		}
	}
	return n, err
}

// betweenWorkload runs one transaction of two statements, and between
// them tells the test (between) and waits for a cancel request to have
// reached the server (delivered): that request finds the backend idle in
// transaction and is ignored. The second statement would sleep 30 s.
type betweenWorkload struct {
	between   chan<- struct{}
	delivered <-chan struct{}
}

func (w *betweenWorkload) Meta() workload.Meta      { return workload.Meta{Name: "between"} }
func (w *betweenWorkload) Validate() error          { return nil }
func (w *betweenWorkload) Tables() []workload.Table { return nil }
func (w *betweenWorkload) TxTypes() []string        { return []string{"between"} }
func (w *betweenWorkload) NewWorker(int, *rand.Rand) workload.Worker {
	return w
}
func (w *betweenWorkload) Next() workload.TxType { return 0 }
func (w *betweenWorkload) Do(ctx context.Context, conn *pgx.Conn, _ workload.TxType) error {
	if _, err := conn.Exec(ctx, "BEGIN; SELECT 1"); err != nil {
		return err
	}
	w.between <- struct{}{}
	select {
	case <-w.delivered:
	case <-time.After(10 * time.Second):
		return errors.New("no cancel request reached the server in 10s")
	}
	_, err := conn.Exec(ctx, "SELECT pg_sleep(30)")
	return err
}

// TestCancelBetweenStatements: a cancel request that reaches the server
// between two statements of a transaction is ignored there; the drain
// sends it again while the client runs, so the next statement fails with
// the server's 57014 (class timeout), not with the socket cut a second
// later (an i/o timeout).
func TestCancelBetweenStatements(t *testing.T) {
	pcfg, err := pgx.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	pcfg.TLSConfig, pcfg.Fallbacks = nil, nil // cancelWatch reads the plain protocol
	delivered := make(chan struct{}, 1)
	dial := pcfg.DialFunc
	pcfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cancelWatch{Conn: c, delivered: delivered}, nil
	}
	between := make(chan struct{}, 1)
	w := &betweenWorkload{between: between, delivered: delivered}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-between; cancel() }() // a stop: cancelled at once
	res, col, err := run(t, ctx, w, func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, pcfg) },
		Config{Clients: 1, Duration: time.Hour, Tick: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.Abandoned != 0 {
		t.Fatalf("result %+v, want stopped, none abandoned", res)
	}
	var u metrics.Unfinished
	for _, iv := range col.ivs {
		tot := iv.Total()
		u.Cancelled += tot.Unfinished.Cancelled
		u.Errors.Add(&tot.Unfinished.Errors)
		u.Examples.Merge(tot.Unfinished.Examples)
	}
	ex, _ := u.Examples.Get(pgerr.ClassTimeout)
	if u.Cancelled != 1 || u.Errors.Total() != 1 || u.Errors[pgerr.ClassTimeout] != 1 || ex.Last.SQLState != "57014" {
		t.Fatalf("cancelled %d, errors %v (%+v), want 1 cancelled by the server's 57014", u.Cancelled, u.Errors, u.Examples)
	}
}
