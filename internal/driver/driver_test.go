package driver

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// sleepWorkload is a fake with no database: each transaction sleeps on clk
// (the system clock if nil), and fail decides (per client, per call)
// whether it fails and how.
type sleepWorkload struct {
	sleep time.Duration
	fail  func(client, n int) error
	clk   clock.Clock
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
	clk := w.w.clk
	if clk == nil {
		clk = clock.Real()
	}
	t := clk.NewTimer(w.w.sleep)
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

// unfinished adds up what was running when the measured time ended.
func (c *collected) unfinished() (u metrics.Unfinished) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, iv := range c.ivs {
		t := iv.Total()
		u.SoFarMaxUS = max(u.SoFarMaxUS, t.Unfinished.SoFarMaxUS)
		u.SoFarSumUS += t.Unfinished.SoFarSumUS
		u.Committed += t.Unfinished.Committed
		u.Failed += t.Unfinished.Failed
		u.Cancelled += t.Unfinished.Cancelled
	}
	return u
}

// measured adds up the intervals' time that is not drain.
func (c *collected) measured() (d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, iv := range c.ivs {
		if !iv.Drain {
			d += iv.Duration()
		}
	}
	return d
}

func run(t *testing.T, ctx context.Context, w workload.Workload, dial target.Dialer, cfg Config) (Result, *collected, error) {
	t.Helper()
	var col collected
	cfg.OnInterval = col.add
	rec := metrics.NewRecorder(w.TxTypes(), time.Now())
	res, err := Run(ctx, w, dial, cfg, rec)
	return res, &col, err
}

// fakeStart is where the fake clock of stepped runs starts: far from the
// synctest bubble's own epoch (2000-01-01), so a time read from anything but
// the injected clock would show in the results.
var fakeStart = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// stepped runs Run on clk (a clock.Fake, also the workload's clock) inside
// the synctest bubble of the calling test. Whenever every goroutine of the
// run is blocked (synctest.Wait), it moves clk to the next timer's due
// time, so every event of the run happens at its exact due time and the
// results do not depend on the machine's speed or load. Events due at the
// same instant still race as they would on the wall clock; tests choose
// lengths that keep the events they assert on apart.
func stepped(t *testing.T, ctx context.Context, clk *clock.Fake, w workload.Workload, dial target.Dialer, cfg Config) (Result, *collected, error) {
	t.Helper()
	var col collected
	cfg.OnInterval = col.add
	cfg.Clock = clk
	rec := metrics.NewRecorder(w.TxTypes(), clk.Now())
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(ctx, w, dial, cfg, rec)
		done <- outcome{res, err}
	}()
	for {
		synctest.Wait()
		select {
		case o := <-done:
			return o.res, &col, o.err
		default:
		}
		next, ok := clk.Next()
		if !ok {
			t.Fatalf("run blocked at +%s with no timer armed", clk.Now().Sub(fakeStart))
		}
		clk.Set(next)
	}
}

// at calls f when clk reaches d after fakeStart (time.AfterFunc on clk).
func at(clk *clock.Fake, d time.Duration, f func()) {
	tm := clk.NewTimer(fakeStart.Add(d).Sub(clk.Now()))
	go func() { <-tm.C; f() }()
}

// exactly reports whether every value in h is v (to h's resolution).
func exactly(h interface {
	TotalCount() int64
	Min() int64
	Max() int64
	ValuesAreEquivalent(a, b int64) bool
}, v int64) bool {
	return h.TotalCount() > 0 && h.ValuesAreEquivalent(h.Min(), v) && h.ValuesAreEquivalent(h.Max(), v)
}

// endsIn counts the transactions of a closed-loop client that starts at s
// and runs back to back transactions of length d that end in (from, to].
func endsIn(s, d, from, to time.Duration) int64 {
	k := func(t time.Duration) int64 { // transactions ended by t
		if t < s {
			return 0
		}
		return int64((t - s) / d)
	}
	return k(to) - k(from)
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
	synctest.Test(t, func(t *testing.T) {
		// 7 ms transactions never end on a 100 ms tick before 700 ms, so
		// each one's interval is certain.
		clk := clock.NewFake(fakeStart)
		w := &sleepWorkload{sleep: 7 * time.Millisecond, clk: clk}
		res, col, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 2, Duration: 500 * time.Millisecond, Tick: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		// The run ends when the transactions in flight at 500 ms end (504).
		if !res.Start.Equal(fakeStart) || res.End.Sub(res.Start) != 504*time.Millisecond {
			t.Fatalf("run from %s lasted %s, want from %s for 504ms", res.Start, res.End.Sub(res.Start), fakeStart)
		}
		// 5 full ticks, the last at the end of the measured time, and the
		// drain's.
		if n := len(col.ivs); n != 6 || col.ivs[4].Drain || !col.ivs[5].Drain {
			t.Fatalf("%d intervals, want 6, the 6th (only) the drain's", n)
		}
		if d := col.measured(); d != 500*time.Millisecond || !res.Measured.Equal(res.Start.Add(d)) {
			t.Fatalf("measured %s (end %s), want 500ms", d, res.Measured.Sub(res.Start))
		}
		// The two transactions in flight at 500 ms (since 497) are
		// unfinished, 3 ms then, and commit in the drain.
		if u := col.unfinished(); !reflect.DeepEqual(u, metrics.Unfinished{SoFarMaxUS: 3000, SoFarSumUS: 6000, Committed: 2}) {
			t.Fatalf("unfinished %+v, want 2 committed in the drain, 3 ms so far each", u)
		}
		for k, iv := range col.ivs {
			// Tick boundaries are start + k·tick exactly: no drift.
			want := res.Start.Add(time.Duration(k+1) * 100 * time.Millisecond)
			if k == 5 {
				want = res.End
			}
			if !iv.End.Equal(want) {
				t.Fatalf("tick %d at %s, want %s", k+1, iv.End.Sub(res.Start), want.Sub(res.Start))
			}
			from := iv.Start.Sub(res.Start)
			tot := iv.Total()
			if k == 5 {
				break // the drain's: only the unfinished end in it
			}
			if wantN := 2 * endsIn(0, 7*time.Millisecond, from, iv.End.Sub(res.Start)); tot.Count != wantN {
				t.Fatalf("interval %d: %d transactions, want %d", k+1, tot.Count, wantN)
			}
			if !exactly(tot.Latency, 7000) || !exactly(tot.Service, 7000) {
				t.Fatalf("interval %d: latency %d..%dµs, want 7000", k+1, tot.Latency.Min(), tot.Latency.Max())
			}
		}
		if ok, _, _, _ := col.total(); ok != 142 { // 2 clients × 71 (the 72nd ends at 504 ms, unfinished)
			t.Fatalf("committed %d, want 142", ok)
		}
	})
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
	if ok != 5 || failed != 5 || retries != 0 || errs[pgerr.ClassSerialization] != 5 {
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
	if errs[pgerr.ClassAdminShutdown] != 1 || errs[pgerr.ClassStarting] != 3 || failed != 4 || ok != 36 {
		t.Fatalf("ok %d failed %d errs %v", ok, failed, errs)
	}
	// Each failure keeps its text.
	var ex metrics.ErrorExamples
	col.mu.Lock()
	for _, iv := range col.ivs {
		ex.Merge(iv.Total().Examples)
	}
	col.mu.Unlock()
	lostEx, _ := ex.Get(pgerr.ClassAdminShutdown)
	startEx, _ := ex.Get(pgerr.ClassStarting)
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
	if !errors.As(err, &ice) || ice.Class != pgerr.ClassAuth || ice.Failed != 3 {
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
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(fakeStart)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Cancelled at 205 ms, in the middle of every client's 21st
		// transaction: each one finishes it (the fake cannot be interrupted
		// through a socket) and starts no other.
		at(clk, 205*time.Millisecond, cancel)
		res, col, err := stepped(t, ctx, clk, &sleepWorkload{sleep: 10 * time.Millisecond, clk: clk}, nilDialer,
			Config{Clients: 4, Duration: time.Hour, Tick: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Stopped || res.StopReason != "interrupted" || res.Abandoned != 0 {
			t.Fatalf("result %+v", res)
		}
		if d := res.End.Sub(res.Start); d != 210*time.Millisecond {
			t.Fatalf("stopped after %s, want 210ms", d)
		}
		ok, failed, _, _ := col.total()
		if ok != 80 || failed != 0 || col.measured() != 205*time.Millisecond {
			t.Fatalf("committed %d failed %d in %s, want 80 (4 × 20) and 0 in 205ms", ok, failed, col.measured())
		}
		// The 21st transactions were running at the stop: unfinished, 5 ms
		// then; they end (the fake cannot be interrupted) in the drain.
		if u := col.unfinished(); !reflect.DeepEqual(u, metrics.Unfinished{SoFarMaxUS: 5000, SoFarSumUS: 20000, Committed: 4}) {
			t.Fatalf("unfinished %+v, want 4 committed in the drain, 5 ms so far each", u)
		}
	})
}

func TestDrainDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One transaction outlives the run by far: it is cancelled at the
		// drain deadline, and when it does not stop (the fake cannot be
		// interrupted through a socket) the run ends without it at the
		// abandon deadline.
		clk := clock.NewFake(fakeStart)
		w := &sleepWorkload{sleep: time.Hour, clk: clk}
		res, _, err := stepped(t, context.Background(), clk, w, nilDialer,
			Config{Clients: 1, Duration: 100 * time.Millisecond, Drain: 200 * time.Millisecond, Tick: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if res.Abandoned != 1 {
			t.Fatalf("abandoned %d, want 1", res.Abandoned)
		}
		if d, want := res.End.Sub(res.Start), 100*time.Millisecond+200*time.Millisecond+abandonAfter; d != want {
			t.Fatalf("run took %s, want %s (length + drain + abandon deadline)", d, want)
		}
		// Let the abandoned client finish so that the bubble ends.
		clk.Advance(time.Hour)
		synctest.Wait()
	})
}

// TestStopDuringDrain: a stop (Ctrl-C) while the transactions still
// running at the end of the measured time drain stops the run: it is no
// longer complete.
func TestStopDuringDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(fakeStart)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		at(clk, 150*time.Millisecond, cancel)
		w := &sleepWorkload{sleep: time.Hour, clk: clk}
		res, col, err := stepped(t, ctx, clk, w, nilDialer,
			Config{Clients: 1, Duration: 100 * time.Millisecond, Drain: 10 * time.Second, Tick: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Stopped || !strings.Contains(res.StopReason, "during the drain") {
			t.Fatalf("stopped %v (%q), want stopped during the drain", res.Stopped, res.StopReason)
		}
		if d := col.measured(); d != 100*time.Millisecond || !res.Measured.Equal(res.Start.Add(d)) {
			t.Fatalf("measured %s, want 100ms", d)
		}
		clk.Advance(time.Hour)
		synctest.Wait()
	})
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

// countingClock is the real clock, counting its reads.
type countingClock struct {
	clock.Clock
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time { c.reads.Add(1); return c.Clock.Now() }

// TestClosedLoopReadsTheClockOncePerTransaction: with no pause between
// transactions, the next one starts at the last one's end, as in pgbench.
func TestClosedLoopReadsTheClockOncePerTransaction(t *testing.T) {
	const n = 200
	clk := &countingClock{Clock: clock.Real()}
	_, col, err := run(t, context.Background(), &sleepWorkload{}, nilDialer, Config{Clients: 1, Transactions: n, Tick: time.Hour, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _, _ := col.total(); ok != n {
		t.Fatalf("committed %d, want %d", ok, n)
	}
	// A few more for the run itself (its start, its end).
	if got := clk.reads.Load(); got > n+20 {
		t.Fatalf("%d clock reads for %d transactions, want at most one each and 20 more", got, n)
	}
}
