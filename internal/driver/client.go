package driver

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/gostack"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/workload"
)

// Reconnect backoff bounds: a client that cannot connect waits this long
// (doubling) before its next attempt, so an outage is sampled a few times a
// second per client instead of flooding the server's log.
const (
	backoffMin = 50 * time.Millisecond
	backoffMax = 2 * time.Second
)

// client is one simulated user: one connection, one worker, one metrics
// handle, all owned by its goroutine.
//
// With hundreds of clients a client's memory is out of the CPU's cache
// each time its turn comes again, so each cache line a transaction touches
// costs a miss. The fields loop and run touch per transaction therefore
// come first, in the struct's first two cache lines: the struct's size is
// a multiple of 64 bytes (checked below), so Go's allocator puts it at the
// start of a line (a size class that is a multiple of 64). The second line
// holds all a transaction touches once its statements are done, so only it
// is loaded again after the wait for the server.
type client struct {
	// The first cache line.
	worker workload.Worker
	model  loadModel // when the next transaction is due
	// pgw is worker as a PgConnWorker when the client connects with
	// pgconn alone (Group.DialPgConn); nil: worker.Do gets conn.
	pgw   workload.PgConnWorker
	conn  *pgx.Conn
	live  bool // connected (conn may be nil for connection-less test dialers, and is for pgw)
	paced bool // pacer is set
	// The second cache line.
	cfg     *Config
	group   *Group // the client's group: load model, retries, connection mode
	txBase  int    // index of the group's first transaction type in the Recorder
	done    int
	retries int            // retries of the transaction in flight (run)
	handle  metrics.Handle // kept here: its writes share the line (Recorder.InitHandle)

	// Not touched per transaction.
	id      int
	pacer   workload.Pacer // worker's keying and think times; nil if it has none
	connect func(context.Context) (*pgx.Conn, *pgconn.PgConn, error)
	backoff time.Duration // reconnect backoff; 0 after a connection
	// retryBudget spaces the run's connection attempts after failures.
	retryBudget *reconnectLimiter
	pg          atomic.Pointer[pgconn.PgConn] // the connection, also for cancelRequest and interrupt from other goroutines
	refused     bool                          // the server refused its first connection; it sits the run out
	started     bool                          // the loop goroutine was started
	finished    atomic.Bool                   // the loop goroutine returned
	hadConn     bool
	growStack   bool // loop grows its stack to 4 KB first (run.go's launch)
	connected   *atomic.Int64
	reconnects  int64
	jitter      *rand.Rand      // backoff jitter
	startAt     time.Time       // ramp-up: no transaction before
	gate        <-chan struct{} // Group.After: closed when the earlier group has finished
	// pacingIgnored is set (shared by all clients) when an open-loop run's
	// worker asked for keying or think times, for a note.
	pacingIgnored *atomic.Bool
	// curTx and stepMark time the commands of the running transaction
	// for Hooks.Step (-r): command i took from stepMark to its Step. Set
	// only with -r.
	curTx    workload.TxType
	stepMark time.Time
	// end and wg learn of loop's return (exit).
	end *groupEnd
	wg  *sync.WaitGroup
	_   [clientPad]byte
}

// clientPad pads client to a multiple of 64 bytes on 64-bit platforms; the array's length
// below fails to compile when it does not.
const clientPad = 8

var _ [0]struct{} = [unsafe.Sizeof(client{}) % 64 * (unsafe.Sizeof(uintptr(0)) / 8)]struct{}{} // 64-bit platforms

// setHooks gives a worker that asks for them the driver's sleep (on the
// run's clock; a pause of a transaction still running when the measured
// time ends goes on in the drain, and is cut short when the drain's
// deadline or a stop cancels the run) and, with -r, statement timing.
func (c *client) setHooks(cancelled <-chan struct{}) {
	hu, ok := c.worker.(workload.HookUser)
	if !ok {
		return
	}
	h := workload.Hooks{Sleep: func(d time.Duration) bool { return pause(c.cfg.Clock, d, cancelled) }}
	if c.cfg.StatementLatencies {
		h.Step = func(i int) {
			now := c.cfg.Clock.Now()
			c.handle.Statement(c.txBase+int(c.curTx), i, now.Sub(c.stepMark))
			c.stepMark = now
		}
	}
	hu.SetHooks(h)
}

// loop is the client's goroutine: it runs transactions until the run
// ends for it, then tells the run (exit). Its frame is under every
// statement's wait, on a stack that stays at 2 KB for a client whose
// transactions fit it (smallStack), so the rarer paths' locals live in
// the functions they call.
func (c *client) loop(ctx context.Context, stopNew <-chan struct{}) {
	if c.growStack {
		gostack.At4K() // its transactions reach 4 KB
	}
	// start is also the last transaction's end while the next one starts
	// right after it (a closed loop, no pause between): then that is its
	// start, as in pgbench, one clock read per transaction instead of two.
	var start time.Time
	for going := c.begin(ctx.Done(), stopNew); going; {
		intended, ok := c.model.next(stopNew, c.done)
		if !ok {
			break
		}
		tx := c.worker.Next()
		var thinking time.Duration
		if c.paced {
			start = time.Time{}
			if thinking, ok = c.keyIn(tx, stopNew); !ok {
				break
			}
		}
		if !intended.IsZero() || start.IsZero() {
			start = c.cfg.Clock.Now()
		}
		if intended.IsZero() {
			if c.pastEnd(start) {
				break // the measured time is over: nothing new starts
			}
			intended = start
		} else if limit := c.group.LatencyLimit; limit > 0 && start.Sub(intended) > limit {
			c.skip(tx, &intended, &start) // already too late to be worth starting (pgbench -L)
			continue
		}
		if c.cfg.StatementLatencies {
			c.curTx, c.stepMark = tx, start
		}
		// The common case, a connected pgconn-only client, runs the
		// transaction here: run (connecting, retries) is called only
		// when it is needed, its frame not under every statement's wait.
		var class pgerr.ErrorClass
		var connectFailed bool
		var err error
		if c.pgw != nil && c.live {
			c.retries = 0 // as run does: the Observer's count is this transaction's
			if err = c.pgw.DoPgConn(c.cfg.stmtCtx, tx); err != nil || c.group.ConnectPerTx {
				class, connectFailed, err = c.run(ctx, tx, err)
			}
		} else {
			class, connectFailed, err = c.run(ctx, tx, errNotRun)
		}
		if class != pgerr.ClassNone && (ctx.Err() != nil || errors.Is(err, workload.ErrStopped)) {
			// Cancelled by the drain's deadline or a stop (in a pause of
			// the transaction, \sleep, too): unfinished, then cancelled.
			// A list's end (ErrStopped, not cancelled) counts nothing.
			if ctx.Err() != nil {
				c.cancelled(tx, &intended, class, err)
			}
			break
		}
		start = c.record(tx, &intended, &start, class, err)
		c.done++
		if connectFailed {
			// The backoff is the wait; no think time on top of it.
			start = time.Time{}
			if !c.sleepBackoff(ctx, stopNew) {
				break
			}
			continue
		}
		// Think time after the result, skipped after a -t run's last
		// transaction; a stop during it ends the client at once.
		if thinking > 0 && (c.cfg.Transactions == 0 || c.done < c.cfg.Transactions) {
			start = time.Time{}
			if !pause(c.cfg.Clock, thinking, stopNew) {
				break
			}
		}
	}
	c.exit()
}

// The parts of loop before and after its transactions are functions of
// their own: loop is at the bottom of every client's stack, which starts at
// 2 KB (see smallStack), and what they need (a select's cases, the
// end time, the arguments of the calls that count a transaction) is then
// not in its frame, under every statement's wait.

// begin prepares the loop: the worker's hooks, then the wait for the
// earlier group's end (Group.After) and the client's ramp-up start. False
// if the run ends first.
func (c *client) begin(cancelled, stopNew <-chan struct{}) bool {
	c.hadConn = c.live
	c.setHooks(cancelled)
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-stopNew:
			return false
		}
	}
	return c.startAt.IsZero() || sleepUntil(c.cfg.Clock, c.startAt, stopNew)
}

// record counts the outcome of transaction tx, due at intended and started
// at start, ending now, tells the run's Observer and returns the end.
func (c *client) record(tx workload.TxType, intended, start *time.Time, class pgerr.ErrorClass, err error) time.Time {
	end := c.cfg.Clock.Now()
	if c.pastEnd(end) {
		// Not one of the measured time's: the Observer's logs (pgbench
		// -l) hold what the summary counts.
		c.unfinished(tx, intended, class, err, &end)
		return end
	}
	if class == pgerr.ClassNone {
		latency := end.Sub(*intended)
		c.handle.Done(c.txBase+int(tx), latency, end.Sub(*start))
		if limit := c.group.LatencyLimit; limit > 0 && latency > limit {
			c.handle.Late(c.txBase + int(tx))
		}
	} else {
		c.failed(tx, class, err, &end)
	}
	if c.cfg.Observer != nil {
		c.observe(tx, intended, start, &end, class, err)
	}
	return end
}

// pastEnd reports whether t is after the end of the measured time.
func (c *client) pastEnd(t time.Time) bool {
	we := c.cfg.windowEnd.Load()
	return we != nil && t.After(*we)
}

// unfinished counts a transaction that was still running when the
// measured time ended and ended since, at end, in the drain: committed, or
// failed with class and err.
//
//go:noinline
func (c *client) unfinished(tx workload.TxType, intended *time.Time, class pgerr.ErrorClass, err error, end *time.Time) {
	outcome := metrics.DrainCommitted
	if class != pgerr.ClassNone {
		outcome = metrics.DrainFailed
	}
	c.handle.Unfinished(c.txBase+int(tx), c.cfg.windowEnd.Load().Sub(*intended), outcome, class, pgerr.Detail(err, *end))
}

// cancelled counts a transaction cancelled by the drain's deadline or a
// stop, which failed with class and err (the server's 57014 when the
// cancel request reached it): unfinished at the end of the measured time.
//
//go:noinline
func (c *client) cancelled(tx workload.TxType, intended *time.Time, class pgerr.ErrorClass, err error) {
	now := c.cfg.Clock.Now()
	soFar := now.Sub(*intended)
	if we := c.cfg.windowEnd.Load(); we != nil {
		soFar = we.Sub(*intended)
	}
	c.handle.Unfinished(c.txBase+int(tx), soFar, metrics.DrainCancelled, class, pgerr.Detail(err, now))
}

// keyIn waits the keying time of tx, as its user keys in the
// transaction's input before it starts (not part of its latency), and
// gives the think time to wait after it; false if the run is ending (a
// stop during it counts nothing).
func (c *client) keyIn(tx workload.TxType, stopNew <-chan struct{}) (thinking time.Duration, ok bool) {
	keying, thinking := c.pacer.Pauses(tx)
	if c.model.open() {
		// Open loop: the schedule sets the arrivals, pauses of an
		// emulated user do not apply. Asked once, for the note.
		if keying > 0 || thinking > 0 {
			c.pacingIgnored.Store(true)
		}
		c.pacer, c.paced = nil, false
		return 0, true
	}
	return thinking, pause(c.cfg.Clock, keying, stopNew)
}

// skip counts a transaction not started because it was already later
// than the latency limit.
//
//go:noinline
func (c *client) skip(tx workload.TxType, intended, start *time.Time) {
	c.handle.Skip(c.txBase + int(tx))
	if obs := c.cfg.Observer; obs != nil {
		obs.ObserveTx(TxEvent{Client: c.id, Type: c.txBase + int(tx), Intended: *intended, Start: *start, End: *start, Skipped: true})
	}
}

// failed counts a failed transaction, with what the failure said.
//
//go:noinline
func (c *client) failed(tx workload.TxType, class pgerr.ErrorClass, err error, end *time.Time) {
	c.handle.Fail(c.txBase+int(tx), class, pgerr.Detail(err, *end))
	c.statementFailed(tx, err, false)
}

// observe tells the run's Observer of a transaction's outcome.
//
//go:noinline
func (c *client) observe(tx workload.TxType, intended, start, end *time.Time, class pgerr.ErrorClass, err error) {
	c.cfg.Observer.ObserveTx(TxEvent{Client: c.id, Type: c.txBase + int(tx), Intended: *intended, Start: *start, End: *end,
		Class: class, Err: err, Retries: c.retries})
}

// run runs one transaction, connecting first if the client has no
// connection, retrying retryable failures up to MaxTries. It reports the
// outcome's class, whether the failure was a failed connection attempt, and
// the error of a failure (kept with it for its text). first is the
// outcome of a first try loop made itself (nil: it succeeded), or
// errNotRun.
//
//go:noinline
func (c *client) run(ctx context.Context, tx workload.TxType, first error) (pgerr.ErrorClass, bool, error) {
	c.retries = 0
	if first == errNotRun && !c.live {
		conn, pc, err := c.connect(ctx)
		if err != nil {
			return pgerr.Classify(err), true, err
		}
		c.setConn(conn, pc)
	}
	for try := 1; ; try++ {
		// Statements run under a context that cannot be cancelled: pgconn
		// then skips arming a cancel watch per statement, a measurable
		// share of client CPU. A stopping run interrupts statements in
		// flight through the socket deadline instead (interrupt).
		err := first
		if first = errNotRun; err == errNotRun && c.pgw != nil {
			err = c.pgw.DoPgConn(c.cfg.stmtCtx, tx)
		} else if err == errNotRun {
			err = c.worker.Do(c.cfg.stmtCtx, c.conn, tx)
		}
		if err == nil {
			break
		}
		class := pgerr.Classify(err)
		if class.ConnectionBroken() || c.connClosed() {
			c.dropConn()
			return class, false, err
		}
		if class.Retryable() && try < c.group.MaxTries && ctx.Err() == nil {
			c.handle.Retry(c.txBase+int(tx), class, c.retries == 0)
			c.statementFailed(tx, err, true)
			c.retries++
			if r, ok := c.worker.(workload.Retrier); ok {
				r.Retry() // the same random draws again, as pgbench
			}
			c.stepMark = c.cfg.Clock.Now() // -r: the retry's first command is timed from here
			continue
		}
		return class, false, err
	}
	if c.group.ConnectPerTx {
		c.dropConn()
	}
	return pgerr.ClassNone, false, nil
}

// smallStack reports whether the client's transactions fit the 2 KB
// stack a goroutine starts with (workload.SmallStacker): else loop grows
// it to 4 KB first, which one growth in its first transaction would do
// with the client's frames on it to copy, and a collection could shrink
// again while the client waits between transactions.
func (c *client) smallStack() bool {
	s, ok := c.worker.(workload.SmallStacker)
	return ok && c.pgw != nil && c.group.Protocol == workload.ProtocolSimple && !c.group.Held && s.SmallStack()
}

// errNotRun tells run that the transaction's first try is still to run.
var errNotRun = errors.New("not run")

// exit ends the client's goroutine (loop): it tells the run.
func (c *client) exit() {
	c.finished.Store(true)
	c.end.clientDone()
	c.wg.Done()
}

// statementFailed counts, with -r, a failure of the transaction at the
// command its error names (workload.StatementError): retried, or final.
func (c *client) statementFailed(tx workload.TxType, err error, retried bool) {
	var se *workload.StatementError
	if c.cfg.StatementLatencies && errors.As(err, &se) {
		c.handle.StatementFailed(c.txBase+int(tx), se.Statement, retried)
	}
}

func (c *client) setConn(conn *pgx.Conn, pc *pgconn.PgConn) {
	c.conn, c.live = conn, true
	c.pg.Store(pc)
	c.backoff = 0 // connected again: the next failure waits the least
	c.useConn()
	c.connected.Add(1)
	if c.hadConn && !c.group.ConnectPerTx {
		c.reconnects++
	}
	c.hadConn = true
}

func (c *client) dropConn() {
	if !c.live {
		return
	}
	if pc := c.pg.Swap(nil); pc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		pc.Close(ctx)
		cancel()
	}
	c.conn, c.live = nil, false
	c.connected.Add(-1)
}

// running reports whether the client's goroutine was started and has not
// returned.
func (c *client) running() bool { return c.started && !c.finished.Load() }

// useConn gives a new connection to a PgConnWorker.
func (c *client) useConn() {
	if pc := c.pg.Load(); c.pgw != nil && pc != nil {
		c.pgw.UsePgConn(pc, c.group.Protocol)
	}
}

// connClosed reports whether the client's connection was closed (by a
// failure).
func (c *client) connClosed() bool {
	pc := c.pg.Load()
	return pc != nil && pc.IsClosed()
}

// cancelRequest asks the server to cancel the statement in flight, if the
// client has a connection: the statement then fails with the server's
// 57014 (query_canceled), kept with the failure. It waits at most
// cancelGrace for the request to be delivered; false if there was no
// connection to send it for. Safe from any goroutine.
func (c *client) cancelRequest() bool {
	pg := c.pg.Load()
	if pg == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	_ = pg.CancelRequest(ctx)
	return true
}

// cancelUntilDone sends cancel requests (cancelRequest) until the client's
// goroutine has returned, one every cancelRepeat, for at most cancelGrace
// or until over (the sockets interrupted) or allDone (every client
// returned) is closed. One is not enough: the server cancels only a
// statement in progress and ignores a request that comes while it waits
// for the next command (PostgreSQL's ProcessInterrupts, while
// DoingCommandRead), between two statements of a transaction; the next
// statement would then run until the socket is cut, failing without 57014.
func (c *client) cancelUntilDone(clk clock.Clock, over, allDone <-chan struct{}) {
	for range cancelGrace / cancelRepeat {
		if c.finished.Load() || !c.cancelRequest() {
			return
		}
		t := clk.NewTimer(cancelRepeat)
		select {
		case <-t.C:
		case <-over:
			t.Stop()
			return
		case <-allDone:
			t.Stop()
			return
		}
	}
}

// interrupt makes the statement in flight (and any later I/O on this
// connection) fail at once. Safe from any goroutine.
func (c *client) interrupt() {
	if pg := c.pg.Load(); pg != nil {
		_ = pg.Conn().SetDeadline(time.Unix(1, 0))
	}
}

// sleepUntil waits until t; false if the run is ending.
func sleepUntil(clk clock.Clock, t time.Time, stopNew <-chan struct{}) bool {
	d := clock.Until(clk, t)
	if d <= 0 {
		return true
	}
	timer := clk.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-stopNew:
		return false
	}
}

// pause waits for d; false if the run is ending.
func pause(clk clock.Clock, d time.Duration, stopNew <-chan struct{}) bool {
	return d <= 0 || sleepUntil(clk, clk.Now().Add(d), stopNew)
}

// sleepBackoff waits before the next connection attempt; false means the
// run is ending.
func (c *client) sleepBackoff(ctx context.Context, stopNew <-chan struct{}) bool {
	if c.backoff == 0 {
		c.backoff = backoffMin
	} else if c.backoff *= 2; c.backoff > backoffMax {
		c.backoff = backoffMax
	}
	// ±25% jitter keeps clients that failed together from retrying in
	// lockstep.
	d := c.backoff + time.Duration((c.jitter.Float64()-0.5)*0.5*float64(c.backoff))
	t := c.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-stopNew:
		return false
	case <-ctx.Done():
		return false
	}
	// Then a slot of the run's budget: however many clients fail, the
	// server sees a bounded number of attempts per second.
	return c.retryBudget == nil || sleepUntil(c.cfg.Clock, c.retryBudget.reserve(c.cfg.Clock.Now()), stopNew)
}
