package driver

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// pgconnWorkload's workers are PgConnWorkers: each transaction is one
// statement on the connection UsePgConn gave; its first transaction on a
// connection closes it, so that the client reconnects once.
type pgconnWorkload struct {
	mu         sync.Mutex
	uses, dos  int
	protocols  map[workload.Protocol]int
	pgxDoCalls int
}

func (w *pgconnWorkload) Meta() workload.Meta      { return workload.Meta{Name: "pgconn", PgConnOnly: true} }
func (w *pgconnWorkload) Validate() error          { return nil }
func (w *pgconnWorkload) Tables() []workload.Table { return nil }
func (w *pgconnWorkload) TxTypes() []string        { return []string{"select"} }
func (w *pgconnWorkload) NewWorker(int, *rand.Rand) workload.Worker {
	return &pgconnWorker{w: w}
}

type pgconnWorker struct {
	w      *pgconnWorkload
	pc     *pgconn.PgConn
	closed bool // the first connection was closed
}

func (k *pgconnWorker) Next() workload.TxType { return 0 }

func (k *pgconnWorker) Do(context.Context, *pgx.Conn, workload.TxType) error {
	k.w.mu.Lock()
	defer k.w.mu.Unlock()
	k.w.pgxDoCalls++
	return errors.New("Do called: the client has a pgx.Conn")
}

func (k *pgconnWorker) UsePgConn(pc *pgconn.PgConn, proto workload.Protocol) {
	k.pc = pc
	k.w.mu.Lock()
	defer k.w.mu.Unlock()
	k.w.uses++
	k.w.protocols[proto]++
}

func (k *pgconnWorker) DoPgConn(ctx context.Context, _ workload.TxType) error {
	k.w.mu.Lock()
	k.w.dos++
	k.w.mu.Unlock()
	if err := k.pc.Exec(ctx, "select 1").Close(); err != nil {
		return err
	}
	if !k.closed {
		k.closed = true
		return k.pc.Close(ctx) // the driver finds it closed and reconnects
	}
	return nil
}

// TestPgConnWorkerGetsNoPgxConn: a group whose workers are PgConnWorkers
// and that has a DialPgConn connects through it alone (its pgx Dial is
// never called) and runs every transaction through DoPgConn, giving each
// new connection, a reconnected one too, to UsePgConn with the group's
// protocol.
func TestPgConnWorkerGetsNoPgxConn(t *testing.T) {
	cfg, err := target.ParseDSN(pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	tgt := &target.Target{Config: cfg}
	w := &pgconnWorkload{protocols: map[workload.Protocol]int{}}
	var pgxDials int
	var mu sync.Mutex
	g := Group{
		Workload: w,
		Dial: func(context.Context) (*pgx.Conn, error) {
			mu.Lock()
			defer mu.Unlock()
			pgxDials++
			return nil, errors.New("pgx dial")
		},
		DialPgConn: tgt.PgConnDialer(nil),
		Protocol:   workload.ProtocolExtended,
		Clients:    3,
	}
	const tx = 4
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := metrics.NewRecorder(w.TxTypes(), time.Now())
	res, err := RunGroups(ctx, []Group{g}, Config{Transactions: tx, Seed: 1}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reconnects != 3 || pgxDials != 0 || w.pgxDoCalls != 0 {
		t.Errorf("reconnects %d (want 3), pgx dials %d, pgx Do calls %d (want 0, 0)", res.Reconnects, pgxDials, w.pgxDoCalls)
	}
	// 3 first connections, 3 after the close
	if w.uses != 6 || w.protocols[workload.ProtocolExtended] != 6 || w.dos != 3*tx {
		t.Errorf("UsePgConn %d times %v (want 6, all extended), DoPgConn %d times (want %d)", w.uses, w.protocols, w.dos, 3*tx)
	}
}
