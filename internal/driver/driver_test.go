package driver

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// sleepWorkload is a fake with no database: each transaction sleeps, and
// fail decides (per client, per call) whether it fails and how.
type sleepWorkload struct {
	sleep time.Duration
	fail  func(client, n int) error
}

func (s *sleepWorkload) Meta() workload.Meta      { return workload.Meta{Name: "sleep"} }
func (s *sleepWorkload) Validate() error          { return nil }
func (s *sleepWorkload) Tables() []workload.Table { return nil }
func (s *sleepWorkload) TxTypes() []string        { return []string{"sleep"} }
func (s *sleepWorkload) NewWorker(id int, _ *rand.Rand) workload.Worker {
	return &sleepWorker{w: s, id: id}
}

type sleepWorker struct {
	w  *sleepWorkload
	id int
	n  int
}

func (w *sleepWorker) Next() workload.TxType { return 0 }
func (w *sleepWorker) Do(ctx context.Context, _ *pgx.Conn, _ workload.TxType) error {
	w.n++
	t := time.NewTimer(w.w.sleep)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	if w.w.fail != nil {
		return w.w.fail(w.id, w.n)
	}
	return nil
}

// nilDialer "connects" without a database.
func nilDialer(context.Context) (*pgx.Conn, error) { return nil, nil }

type collected struct {
	mu  sync.Mutex
	ivs []metrics.Interval
}

func (c *collected) add(iv metrics.Interval) { c.mu.Lock(); c.ivs = append(c.ivs, iv); c.mu.Unlock() }

func (c *collected) total() (ok, failed, retries int64, errs metrics.ErrorCounts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, iv := range c.ivs {
		t := iv.Total()
		ok += t.Count
		failed += t.Failed()
		retries += t.Retries
		errs.Add(&t.Errors)
	}
	return
}

func run(t *testing.T, ctx context.Context, w workload.Workload, dial target.Dialer, cfg Config) (Result, *collected, error) {
	t.Helper()
	var col collected
	cfg.OnInterval = col.add
	rec := metrics.NewRecorder(w.TxTypes(), time.Now())
	res, err := Run(ctx, w, dial, cfg, rec)
	return res, &col, err
}

func TestTransactionsPerClient(t *testing.T) {
	w := &sleepWorkload{sleep: time.Millisecond}
	res, col, err := run(t, context.Background(), w, nilDialer, Config{Clients: 4, Transactions: 25, Tick: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ok, failed, _, _ := col.total()
	if ok != 100 || failed != 0 {
		t.Fatalf("committed %d failed %d, want 100 and 0", ok, failed)
	}
	if res.Stopped {
		t.Fatal("a complete run was marked stopped")
	}
	// Intervals are contiguous and numbered.
	for i, iv := range col.ivs {
		if iv.Seq != i+1 || (i > 0 && !iv.Start.Equal(col.ivs[i-1].End)) {
			t.Fatalf("interval %d not contiguous: %+v", i, iv)
		}
	}
}

func TestDurationAndTicks(t *testing.T) {
	w := &sleepWorkload{sleep: 5 * time.Millisecond}
	res, col, err := run(t, context.Background(), w, nilDialer, Config{Clients: 2, Duration: 500 * time.Millisecond, Tick: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.End.Sub(res.Start); d < 500*time.Millisecond || d > 2*time.Second {
		t.Fatalf("run lasted %s, want about 500ms", d)
	}
	// 5 full ticks and a short final one (or 6 if the end coincided).
	if n := len(col.ivs); n < 5 || n > 7 {
		t.Fatalf("%d intervals, want 5-7", n)
	}
	// Tick boundaries are start + k·tick: no drift.
	for k, iv := range col.ivs[:5] {
		want := res.Start.Add(time.Duration(k+1) * 100 * time.Millisecond)
		if iv.End.Before(want) || iv.End.Sub(want) > 50*time.Millisecond {
			t.Fatalf("tick %d at %s, want %s", k+1, iv.End.Sub(res.Start), want.Sub(res.Start))
		}
	}
	ok, _, _, _ := col.total()
	if ok < 50 || ok > 200 { // 2 clients × 500ms / 5ms = 200 at best
		t.Fatalf("committed %d, want 50..200", ok)
	}
}

func TestRetriesAndFailuresAreCounted(t *testing.T) {
	ser := &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
	// Every odd attempt fails with a serialization failure: with 2 tries
	// every transaction commits on its retry.
	w := &sleepWorkload{fail: func(_, n int) error {
		if n%2 == 1 {
			return ser
		}
		return nil
	}}
	_, col, err := run(t, context.Background(), w, nilDialer, Config{Clients: 1, Transactions: 10, MaxTries: 2, Tick: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ok, failed, retries, _ := col.total()
	if ok != 10 || failed != 0 || retries != 10 {
		t.Fatalf("ok %d failed %d retries %d, want 10 0 10", ok, failed, retries)
	}
	// Without retries the same failures are counted, never as done.
	w2 := &sleepWorkload{fail: func(_, n int) error {
		if n%2 == 1 {
			return ser
		}
		return nil
	}}
	_, col, err = run(t, context.Background(), w2, nilDialer, Config{Clients: 1, Transactions: 10, Tick: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ok, failed, retries, errs := col.total()
	if ok != 5 || failed != 5 || retries != 0 || errs[metrics.ClassSerialization] != 5 {
		t.Fatalf("ok %d failed %d retries %d errs %v", ok, failed, retries, errs)
	}
}

func TestReconnectAfterLostConnection(t *testing.T) {
	var dials atomic.Int64
	dial := func(context.Context) (*pgx.Conn, error) {
		n := dials.Add(1)
		if n >= 3 && n <= 5 { // the first reconnect attempts are refused
			return nil, &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}
		}
		return nil, nil
	}
	lost := &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}
	w := &sleepWorkload{sleep: time.Millisecond, fail: func(client, n int) error {
		if client == 0 && n == 5 {
			return lost
		}
		return nil
	}}
	res, col, err := run(t, context.Background(), w, dial, Config{Clients: 2, Transactions: 20, Tick: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ok, failed, _, errs := col.total()
	// Client 0: tx 5 lost, then 3 failed connection attempts (the server
	// is starting) counted as failed transactions, then the rest commit.
	if errs[metrics.ClassAdminShutdown] != 1 || errs[metrics.ClassStarting] != 3 || failed != 4 || ok != 36 {
		t.Fatalf("ok %d failed %d errs %v", ok, failed, errs)
	}
	// Each failure keeps its text.
	var ex metrics.ErrorExamples
	col.mu.Lock()
	for _, iv := range col.ivs {
		ex.Merge(iv.Total().Examples)
	}
	col.mu.Unlock()
	lostEx, _ := ex.Get(metrics.ClassAdminShutdown)
	startEx, _ := ex.Get(metrics.ClassStarting)
	if lostEx.First.SQLState != "57P01" || lostEx.First.Message != lost.Message ||
		startEx.Last.SQLState != "57P03" || startEx.Last.Message != "the database system is starting up" {
		t.Fatalf("examples %+v", ex)
	}
	if res.Reconnects != 1 {
		t.Fatalf("reconnects %d, want 1", res.Reconnects)
	}
}

func TestInitialConnectFailureIsFatal(t *testing.T) {
	auth := &pgconn.PgError{Code: "28P01", Message: "password authentication failed for user \"bench\""}
	dial := func(context.Context) (*pgx.Conn, error) { return nil, auth }
	_, _, err := run(t, context.Background(), &sleepWorkload{}, dial, Config{Clients: 3, Transactions: 1})
	var ice *InitialConnectError
	if !errors.As(err, &ice) || ice.Class != metrics.ClassAuth || ice.Failed != 3 {
		t.Fatalf("err = %v", err)
	}
}

// TestTooManyConnectionsRefused: a server that refuses a client's first
// connection ends the run before it measures, unless ProceedWithConnected,
// when the refused client sits the run out and the others run.
func TestTooManyConnectionsRefused(t *testing.T) {
	refuseFirst := func() target.Dialer {
		var dials atomic.Int64
		return func(context.Context) (*pgx.Conn, error) {
			if dials.Add(1) == 1 {
				return nil, &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}
			}
			return nil, nil
		}
	}
	cfg := Config{Clients: 2, Transactions: 5, Tick: 20 * time.Millisecond}
	_, _, err := run(t, context.Background(), &sleepWorkload{sleep: time.Millisecond}, refuseFirst(), cfg)
	var ice *InitialConnectError
	if !errors.As(err, &ice) || !ice.Refused || ice.Failed != 1 || ice.Connected != 1 || ice.Clients != 2 {
		t.Fatalf("err = %v, want the refusal of 1 of 2 clients", err)
	}
	cfg.ProceedWithConnected = true
	res, col, err := run(t, context.Background(), &sleepWorkload{sleep: time.Millisecond}, refuseFirst(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ok, failed, _, _ := col.total()
	if ok != 5 || failed != 0 || res.NotConnected != 1 {
		t.Fatalf("committed %d, failed %d, not connected %d: want 5, 0, 1", ok, failed, res.NotConnected)
	}
}

func TestCancelStopsCleanly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	t0 := time.Now()
	res, col, err := run(t, ctx, &sleepWorkload{sleep: 10 * time.Millisecond}, nilDialer,
		Config{Clients: 4, Duration: time.Hour, Tick: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.StopReason != "interrupted" {
		t.Fatalf("result %+v", res)
	}
	if time.Since(t0) > abandonAfter+2*time.Second {
		t.Fatalf("stop took %s", time.Since(t0))
	}
	_, failed, _, _ := col.total()
	if failed != 0 {
		t.Fatalf("transactions cancelled by our own stop were counted as failed: %d", failed)
	}
}

func TestDrainDeadline(t *testing.T) {
	// One transaction outlives the run by far: it is cancelled at the drain
	// deadline and the run still ends.
	w := &sleepWorkload{sleep: time.Hour}
	t0 := time.Now()
	res, _, err := run(t, context.Background(), w, nilDialer,
		Config{Clients: 1, Duration: 100 * time.Millisecond, Drain: 200 * time.Millisecond, Tick: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Abandoned != 1 {
		t.Fatalf("abandoned %d, want 1 (the fake cannot be interrupted through a socket)", res.Abandoned)
	}
	if d := time.Since(t0); d > abandonAfter+2*time.Second {
		t.Fatalf("run took %s despite the drain deadline", d)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{
		{Clients: 0, Duration: time.Second},
		{Clients: 1},
		{Clients: 1, Duration: time.Second, Transactions: 5},
		{Clients: 1, Transactions: -1},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}
