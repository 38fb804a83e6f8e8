package driver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// abandonAfter is how long Run waits for clients after cancelling them.
const abandonAfter = 3 * time.Second

// Config is the load model and the run's length.
type Config struct {
	Clients int
	// Duration ends the run (-T). Zero means the run ends when every client
	// has done Transactions transactions (-t).
	Duration     time.Duration
	Transactions int
	// ConnectPerTx opens a new connection for every transaction (-C); the
	// connection time is part of the transaction's latency, as in pgbench.
	ConnectPerTx bool
	// MaxTries is how many times a transaction failing with a serialization
	// failure or deadlock is tried in all (--max-tries); values below 1
	// mean 1.
	MaxTries int
	// Tick is the interval length (default 1 s).
	Tick time.Duration
	// Drain is how long transactions still running at the end of Duration
	// may take to finish before they are cancelled (default 10 s).
	Drain time.Duration
	// Seed makes the clients' random streams reproducible.
	Seed uint64
	// ConnectConcurrency limits simultaneous initial connection attempts
	// (default 32).
	ConnectConcurrency int
	// OnInterval receives each interval as it is cut, from one goroutine.
	OnInterval func(metrics.Interval)
	// Notef prints a note for the user (may be nil).
	Notef func(format string, args ...any)
	// Clock is where the run reads the time and waits (nil: the system
	// clock); tests inject a clock.Fake.
	Clock clock.Clock

	// Schedule makes the run open-loop: transactions arrive at the
	// schedule's rate whether or not clients are free, wait in a queue for
	// a client, and their latency counts from the scheduled arrival. The
	// run lasts the schedule's length (Duration is then ignored). Keying
	// and think times of a workload.Pacer are ignored (with a note).
	Schedule Schedule
	// Arrival is ArrivalPoisson (default) or ArrivalUniform.
	Arrival string
	// LatencyLimit (pgbench -L): a scheduled transaction already later
	// than this when a client takes it is skipped, one that commits later
	// than this is counted late.
	LatencyLimit time.Duration
	// QueueCap bounds the arrivals waiting for a client (default 1<<20);
	// arrivals beyond it wait in the dispatcher, still timed from their
	// schedule.
	QueueCap int
	// Ramp starts clients one after another over this time.
	Ramp time.Duration
	// Warmup flags the intervals of the first Warmup as warm-up: kept,
	// but excluded from the summary. In a closed loop the run lasts
	// Warmup + Duration; in an open loop the warm-up is the schedule's
	// first part.
	Warmup time.Duration
	// Autostop rules end the run early, cleanly, when one holds.
	Autostop []Rule
	// Sampled gives autostop rules on sampled series their values.
	Sampled Sampled
}

// Result describes how a run went; the measurements are in the Recorder.
type Result struct {
	Start time.Time // measurement start, after the initial connections
	End   time.Time // final tick
	// InitialConnect is the mean time to open a client's first connection.
	InitialConnect time.Duration
	Reconnects     int64
	// Abandoned counts clients that did not stop within the deadline after
	// cancellation; their last transactions are not recorded.
	Abandoned int
	// Stopped is set when the run ended before its planned length (the
	// context was cancelled); StopReason says why.
	Stopped    bool
	StopReason string
	// Autostopped is set when an autostop rule ended the run.
	Autostopped bool
	// Unstarted counts open-loop arrivals that were due but never started
	// because the run ended (their clients were all busy).
	Unstarted int64
}

func (c *Config) defaults() {
	if c.Tick <= 0 {
		c.Tick = time.Second
	}
	if c.Drain <= 0 {
		c.Drain = 10 * time.Second
	}
	if c.MaxTries < 1 {
		c.MaxTries = 1
	}
	if c.ConnectConcurrency <= 0 {
		c.ConnectConcurrency = 32
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Notef == nil {
		c.Notef = func(string, ...any) {}
	}
	if c.OnInterval == nil {
		c.OnInterval = func(metrics.Interval) {}
	}
	if c.QueueCap <= 0 {
		c.QueueCap = 1 << 20
	}
	if c.Arrival == "" {
		c.Arrival = ArrivalPoisson
	}
}

// length is how long the run is planned to last (0: until -t is done).
func (c *Config) length() time.Duration {
	if !c.Schedule.Empty() {
		return c.Schedule.Duration()
	}
	if c.Duration > 0 {
		return c.Warmup + c.Duration
	}
	return 0
}

// Validate reports a configuration that cannot run.
func (c *Config) Validate() error {
	switch {
	case c.Clients <= 0:
		return fmt.Errorf("clients must be at least 1 (got %d)", c.Clients)
	case c.Duration < 0:
		return fmt.Errorf("duration must be positive (got %s)", c.Duration)
	case c.Transactions < 0:
		return fmt.Errorf("transactions must be positive (got %d)", c.Transactions)
	case c.Duration > 0 && c.Transactions > 0:
		return errors.New("give either a duration (-T) or a transaction count (-t), not both")
	case c.Schedule.Empty() && c.Duration == 0 && c.Transactions == 0:
		return errors.New("give a duration (-T) or a transaction count (-t)")
	case !c.Schedule.Empty() && c.Transactions > 0:
		return errors.New("an open-loop schedule runs for its own length: -t does not apply")
	case c.Arrival != "" && c.Arrival != ArrivalPoisson && c.Arrival != ArrivalUniform:
		return fmt.Errorf("unknown arrival process %q (use poisson or uniform)", c.Arrival)
	case c.Ramp < 0 || c.Warmup < 0 || c.LatencyLimit < 0:
		return errors.New("ramp, warm-up and latency limit must not be negative")
	}
	return nil
}

// InitialConnectError is returned when clients could not open their first
// connection for a reason that retrying will not fix (authentication, an
// unknown host, a refused connection).
type InitialConnectError struct {
	Class  metrics.ErrorClass
	Failed int
	Err    error
}

func (e *InitialConnectError) Error() string {
	return fmt.Sprintf("%d client(s) could not connect (%s): %s", e.Failed, e.Class, pgerr.Describe(e.Err))
}

func (e *InitialConnectError) Unwrap() error { return e.Err }

// Run runs w with cfg until the configured length is reached or ctx is
// cancelled, and returns when every client has stopped and the final
// interval was delivered. Cancelling ctx is a clean stop: the intervals so
// far are complete and Result.Stopped is set.
func Run(ctx context.Context, w workload.Workload, dial target.Dialer, cfg Config, rec *metrics.Recorder) (Result, error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	setup, _ := w.(workload.ConnSetup)
	connect := func(ctx context.Context) (*pgx.Conn, error) {
		conn, err := dial(ctx)
		if err != nil {
			return nil, err
		}
		if setup != nil {
			if err := setup.SetupConn(ctx, conn); err != nil {
				conn.Close(context.Background())
				return nil, err
			}
		}
		return conn, nil
	}

	clients := make([]*client, cfg.Clients)
	for i := range clients {
		clients[i] = &client{
			id:      i,
			worker:  w.NewWorker(i, rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1))),
			handle:  rec.NewHandle(),
			connect: connect,
			cfg:     &cfg,
			stmtCtx: context.WithoutCancel(ctx),
			jitter:  rand.New(rand.NewPCG(cfg.Seed^0x5eed, uint64(i)+1)),
		}
	}

	res := Result{}
	if !cfg.ConnectPerTx {
		mean, err := connectAll(ctx, clients, &cfg)
		if err != nil {
			closeAll(clients)
			return res, err
		}
		res.InitialConnect = mean
	}

	var connected atomic.Int64
	var pacingIgnored atomic.Bool
	for _, c := range clients {
		c.connected = &connected
		c.pacer, _ = c.worker.(workload.Pacer)
		c.pacingIgnored = &pacingIgnored
		if c.live {
			connected.Add(1)
			c.setRaw()
		}
	}

	start := cfg.Clock.Now()
	rec.Begin(start)
	if cfg.Warmup > 0 {
		rec.SetWarmupEnd(start.Add(cfg.Warmup))
	}
	res.Start = start
	rules := append([]Rule(nil), cfg.Autostop...)
	for i, c := range clients {
		if cfg.Ramp > 0 && len(clients) > 1 {
			c.startAt = start.Add(cfg.Ramp * time.Duration(i) / time.Duration(len(clients)))
		}
	}

	// stopNew tells clients to start no new transaction; runCtx cancels
	// transactions in flight (pgx sends a cancel request and closes).
	stopNew := make(chan struct{})
	runCtx, cancelRunCtx := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRunCtx()
	// abandonTimer bounds the wait for clients after cancelRun: a worker
	// stuck outside any socket (a fake, a bug) cannot hang the run.
	var abandonTimer <-chan time.Time
	cancelRun := func() {
		cancelRunCtx()
		for _, c := range clients {
			c.interrupt()
		}
		if abandonTimer == nil {
			abandonTimer = cfg.Clock.NewTimer(abandonAfter).C
		}
	}

	var queue chan time.Time
	if !cfg.Schedule.Empty() {
		queue = make(chan time.Time, cfg.QueueCap)
		go dispatch(cfg.Clock, start, cfg.Schedule, cfg.Arrival, cfg.Seed, queue, stopNew)
	}

	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		c.started = true
		c.queue = queue
		go func() {
			defer wg.Done()
			c.loop(runCtx, stopNew)
			c.finished.Store(true)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var endTimer <-chan time.Time
	if length := cfg.length(); length > 0 {
		t := cfg.Clock.NewTimer(clock.Until(cfg.Clock, start.Add(length)))
		defer t.Stop()
		endTimer = t.C
	}
	tick := newTicker(start, cfg.Tick, cfg.Clock)
	defer tick.stop()

	var autostop func(reason string)
	pacingNoted := false
	emit := func(now time.Time) {
		if !pacingNoted && pacingIgnored.Load() {
			pacingNoted = true
			cfg.Notef("keying and think times do not apply to an open loop (the schedule sets the arrivals); ignored")
		}
		iv := rec.Tick(now)
		iv.Connected = int(connected.Load())
		if !cfg.Schedule.Empty() && iv.Duration() > 0 {
			from, to := iv.Start.Sub(start), iv.End.Sub(start)
			iv.TargetRate = (cfg.Schedule.Expected(to) - cfg.Schedule.Expected(from)) / iv.Duration().Seconds()
		}
		cfg.OnInterval(iv)
		for i := range rules {
			r := &rules[i]
			fired := false
			if r.IsSampled() {
				fired = r.observeSampled(&iv, cfg.Sampled)
			} else {
				fired = r.observe(&iv)
			}
			if fired {
				autostop(r.Text)
				break
			}
		}
	}
	var drainTimer <-chan time.Time
	stopping := false
	beginStop := func(reason string, stopped bool) {
		if stopping {
			return
		}
		stopping = true
		res.Stopped, res.StopReason = stopped, reason
		close(stopNew)
		t := cfg.Clock.NewTimer(cfg.Drain)
		drainTimer = t.C
	}
	autostop = func(rule string) {
		if !stopping {
			res.Autostopped = true
			cfg.Notef("autostop: %s", rule)
			beginStop(rule, true)
		}
	}
	ctxDone := ctx.Done()
loop:
	for {
		select {
		case now := <-tick.C:
			emit(now)
		case <-endTimer:
			endTimer = nil
			beginStop("", false)
		case <-ctxDone:
			ctxDone = nil
			reason := "interrupted"
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				reason = cause.Error()
			}
			beginStop(reason, true)
			// A user stop does not wait for slow transactions.
			cancelRun()
		case <-drainTimer:
			drainTimer = nil
			cfg.Notef("transactions still running %s after the end were cancelled", cfg.Drain)
			cancelRun()
		case <-abandonTimer:
			stuck := 0
			for _, c := range clients {
				if !c.finished.Load() {
					stuck++
				}
			}
			cfg.Notef("%d client(s) did not stop %s after being cancelled; ending the run without them", stuck, abandonAfter)
			res.Abandoned = stuck
			break loop
		case <-done:
			break loop
		}
	}
	res.End = cfg.Clock.Now()
	emit(res.End)
	if queue != nil {
		res.Unstarted = int64(len(queue))
		if res.Unstarted > 0 {
			cfg.Notef("%d scheduled transactions were due but never started (all clients busy)", res.Unstarted)
		}
	}
	closeAll(clients)
	for _, c := range clients {
		res.Reconnects += c.reconnects
	}
	return res, nil
}

// connectAll opens every client's first connection, a bounded number at a
// time, and returns the mean connection time. Failures that a retry cannot
// fix end the run before it starts; others (too many connections) leave the
// client to reconnect in its loop.
func connectAll(ctx context.Context, clients []*client, cfg *Config) (time.Duration, error) {
	sem := make(chan struct{}, cfg.ConnectConcurrency)
	var (
		mu       sync.Mutex
		total    time.Duration
		n        int
		fatal    *InitialConnectError
		deferred int
	)
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t0 := cfg.Clock.Now()
			conn, err := c.connect(ctx)
			d := clock.Since(cfg.Clock, t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				class := pgerr.Classify(err)
				switch {
				case ctx.Err() != nil:
					if fatal == nil {
						fatal = &InitialConnectError{Class: class, Err: ctx.Err()}
					}
					fatal.Failed++
				case class == metrics.ClassTooManyConnections || class == metrics.ClassAdminShutdown:
					deferred++
				default:
					if fatal == nil {
						fatal = &InitialConnectError{Class: class, Err: err}
					}
					fatal.Failed++
				}
				return
			}
			c.conn, c.live = conn, true
			total += d
			n++
		}()
	}
	wg.Wait()
	if fatal != nil {
		return 0, fatal
	}
	if deferred > 0 {
		cfg.Notef("%d of %d clients could not connect yet (server refused: too many connections or starting up); they keep retrying and count failures", deferred, len(clients))
	}
	if n == 0 {
		return 0, nil
	}
	return total / time.Duration(n), nil
}

func closeAll(clients []*client) {
	var wg sync.WaitGroup
	for _, c := range clients {
		if c.running() {
			continue // abandoned: its goroutine still owns the connection
		}
		if c.conn == nil {
			c.live = false
			continue
		}
		wg.Add(1)
		go func(conn *pgx.Conn) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			conn.Close(ctx)
		}(c.conn)
		c.conn, c.live = nil, false
	}
	wg.Wait()
}
