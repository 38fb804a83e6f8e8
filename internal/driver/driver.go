package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/gostack"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// abandonAfter is how long Run waits for clients after cancelling them.
const abandonAfter = 3 * time.Second

// DefaultDrain is Config.Drain's default (--drain-timeout).
const DefaultDrain = 10 * time.Second

// NoDrain as Config.Drain cancels the transactions still running at the
// end of the measured time at once (--drain-timeout 0).
const NoDrain time.Duration = -1

// cancelGrace is how long cancelled statements may take to end by the
// server's cancel before their sockets are interrupted.
const cancelGrace = time.Second

// cancelRepeat spaces the cancel requests to a client still running in
// the grace (client.cancelUntilDone).
const cancelRepeat = 100 * time.Millisecond

// Group is a set of clients that run one workload under one load model
// through one dialer (client groups). A run holds one or more groups; they
// share the run's clock, length, ramp, warm-up, autostop rules and
// Recorder, so their intervals are cut together.
type Group struct {
	// Name labels the group (empty for the only group of a run).
	Name     string
	Workload workload.Workload
	Dial     target.Dialer
	// DialPgConn, when set, connects the clients whose Workers are
	// workload.PgConnWorkers (and whose workload has no ConnSetup) in
	// place of Dial: pgconn alone, no pgx.Conn. Protocol is then the
	// query protocol of its connections (-M).
	DialPgConn target.PgConnDialer
	Protocol   workload.Protocol
	// Held: the clients' connections wait for answers in a netio.Hold
	// (a deeper stack than the netpoller's wait).
	Held    bool
	Clients int
	// TxBase is the Recorder index of the group's first transaction type;
	// the others follow in the order of Workload.TxTypes().
	TxBase       int
	ConnectPerTx bool // see Config.ConnectPerTx
	MaxTries     int  // see Config.MaxTries
	// Schedule, Arrival and LatencyLimit make the group open-loop; see
	// Config.
	Schedule     Schedule
	Arrival      string
	LatencyLimit time.Duration
	// After names an earlier group of the run whose clients must all
	// have finished before this group's clients start their first
	// transaction (TPC-H's throughput test after its power test); ""
	// starts with the run. The clients connect with the others, before the
	// run starts.
	After string
}

// Config is the load model and the run's length. Clients, ConnectPerTx,
// MaxTries, Schedule, Arrival and LatencyLimit describe the one group of
// Run; RunGroups takes them from each Group instead.
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
	// Drain is how long transactions still running at the end of the
	// measured time may take to finish before they are cancelled (0:
	// DefaultDrain; NoDrain: cancelled at once).
	Drain time.Duration
	// Seed makes the clients' random streams reproducible.
	Seed uint64
	// StatementLatencies times each command of a workload's scripts
	// (pgbench -r) through workload.Hooks.Step; off, it costs nothing.
	StatementLatencies bool
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
	// ReconnectRate bounds the connection attempts per second that follow
	// a failed attempt, over all clients (default DefaultReconnectRate).
	ReconnectRate float64
	// ProceedWithConnected lets a run whose server refused some clients'
	// first connections (too many connections, starting up) go on with the
	// clients that connected; by default it ends before measuring, with an
	// *InitialConnectError.
	ProceedWithConnected bool
	// Autostop rules end the run early, cleanly, when one holds.
	Autostop []Rule
	// Sampled gives autostop rules on sampled series their values.
	Sampled Sampled
	// Observer, when not nil, sees every counted transaction (pgbench -l,
	// --verbose-errors); see TxObserver.
	Observer TxObserver
	// Segment runs only this process's share of the clients and arrivals
	// (see Segment); the groups' Clients are the whole run's.
	Segment Segment
	// StartAt, when set, is when measuring starts (after connecting): the
	// wall-clock start shared by every segment (--start-at).
	StartAt time.Time
	// BeforeStart, when set, is called once the clients are connected and
	// StartAt has come, just before measuring starts: a database snapshot
	// taken there brackets the measured window (figures of merit).
	BeforeStart func()
	// OnStart, when set, is told the measured time's start (Result.Start)
	// before any client begins; OnEnd, when set, its end (the planned
	// end, a stop or an autostop), before the drain. Both run on the
	// goroutine of RunGroups and must return at once.
	OnStart, OnEnd func(time.Time)

	stmtCtx context.Context // never cancelled; see client.run
	// windowEnd is the end of the measured time once it is known (the
	// planned end from the start, earlier after a stop): a transaction
	// ending after it is unfinished (see client.record).
	windowEnd *atomic.Pointer[time.Time]
}

// Result describes how a run went; the measurements are in the Recorder.
type Result struct {
	Start time.Time // measurement start, after the initial connections
	End   time.Time // final tick
	// InitialConnect is the mean time to open a client's first connection.
	InitialConnect time.Duration
	Reconnects     int64
	// Measured is the end of the measured time: the planned end, a stop,
	// or the last client's end (-t). Transactions still running then are
	// unfinished (metrics.Unfinished); the intervals after it, until End,
	// are the drain (metrics.Interval.Drain).
	Measured time.Time
	// Abandoned counts clients that did not stop within the deadline after
	// cancellation; their last transactions are not recorded (each was
	// unfinished and cancelled).
	Abandoned int
	// Stopped is set when the run ended before its planned length (the
	// context was cancelled, or clients with lists of transactions,
	// workload.Lister, had not finished them); StopReason says why.
	Stopped    bool
	StopReason string
	// Autostopped is set when an autostop rule ended the run.
	Autostopped bool
	// Unstarted counts open-loop arrivals that were due but never started
	// because the run ended (their clients were all busy).
	Unstarted int64
	// NotConnected counts clients whose first connection the server
	// refused and that sat the run out (ProceedWithConnected).
	NotConnected int
}

func (c *Config) defaults() {
	if c.Tick <= 0 {
		c.Tick = time.Second
	}
	if c.Drain == 0 {
		c.Drain = DefaultDrain
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

// length is how long the run is planned to last (0: until -t is done): a
// closed loop's warm-up and duration, or the longest open-loop schedule
// when every group is open-loop.
func (c *Config) length(groups []Group) time.Duration {
	var longest time.Duration
	for i := range groups {
		if groups[i].Schedule.Empty() {
			if c.Duration > 0 {
				return c.Warmup + c.Duration
			}
			return 0
		}
		longest = max(longest, groups[i].Schedule.Duration())
	}
	return longest
}

// group is the one group of Run.
func (c *Config) group(w workload.Workload, dial target.Dialer) Group {
	return Group{Workload: w, Dial: dial, Clients: c.Clients, ConnectPerTx: c.ConnectPerTx, MaxTries: c.MaxTries,
		Schedule: c.Schedule, Arrival: c.Arrival, LatencyLimit: c.LatencyLimit}
}

// Validate reports a configuration that cannot run.
func (c *Config) Validate() error {
	return c.validate([]Group{c.group(nil, nil)})
}

func (c *Config) validate(groups []Group) error {
	switch {
	case len(groups) == 0:
		return errors.New("a run needs at least one client group")
	case c.Duration < 0:
		return fmt.Errorf("duration must be positive (got %s)", c.Duration)
	case c.Transactions < 0:
		return fmt.Errorf("transactions must be positive (got %d)", c.Transactions)
	case c.Duration > 0 && c.Transactions > 0:
		return errors.New("give either a duration (-T) or a transaction count (-t), not both")
	case c.Ramp < 0 || c.Warmup < 0:
		return errors.New("ramp and warm-up must not be negative")
	}
	for i := range groups {
		g := &groups[i]
		name := ""
		if g.Name != "" {
			name = "group " + g.Name + ": "
		}
		switch {
		case g.Clients <= 0:
			return fmt.Errorf("%sclients must be at least 1 (got %d)", name, g.Clients)
		case g.Schedule.Empty() && c.Duration == 0 && c.Transactions == 0:
			return errors.New("give a duration (-T) or a transaction count (-t)")
		case g.Arrival != "" && g.Arrival != ArrivalPoisson && g.Arrival != ArrivalUniform:
			return fmt.Errorf("%sunknown arrival process %q (use poisson or uniform)", name, g.Arrival)
		case g.LatencyLimit < 0:
			return fmt.Errorf("%slatency limit must not be negative", name)
		case g.After != "" && !slices.ContainsFunc(groups[:i], func(e Group) bool { return e.Name == g.After }):
			return fmt.Errorf("%sstarts after %q, which is not an earlier group of the run", name, g.After)
		}
	}
	return nil
}

// InitialConnectError is returned when clients could not open their first
// connection for a reason that retrying will not fix (authentication, an
// unknown host, a refused connection).
type InitialConnectError struct {
	Class  pgerr.ErrorClass
	Failed int
	Err    error
	// Refused is set when the server turned clients away (too many
	// connections, starting up) after accepting Connected of Clients.
	Refused            bool
	Connected, Clients int
}

func (e *InitialConnectError) Error() string {
	if e.Refused {
		return fmt.Sprintf("the server accepts %d more connections; %d of %d clients could not connect: %s (%s)",
			e.Connected, e.Failed, e.Clients, e.Class, pgerr.Describe(e.Err))
	}
	return fmt.Sprintf("%d client(s) could not connect (%s): %s", e.Failed, e.Class, pgerr.Describe(e.Err))
}

func (e *InitialConnectError) Unwrap() error { return e.Err }

// Run runs w with cfg until the configured length is reached or ctx is
// cancelled, and returns when every client has stopped and the final
// interval was delivered. Cancelling ctx is a clean stop: the intervals so
// far are complete and Result.Stopped is set.
func Run(ctx context.Context, w workload.Workload, dial target.Dialer, cfg Config, rec *metrics.Recorder) (Result, error) {
	return RunGroups(ctx, []Group{cfg.group(w, dial)}, cfg, rec)
}

// unfinishedLists counts the clients whose worker runs a list of
// transactions (workload.Lister) and that did not finish it: not started,
// still running (abandoned), or fewer transactions done or failed than the
// list holds; total is the clients with lists. Len must not change while
// the worker runs (it is read from here for an abandoned client).
func unfinishedLists(clients []*client) (n, total int) {
	for _, c := range clients {
		l, ok := c.worker.(workload.Lister)
		if !ok || l.Len() == 0 {
			continue
		}
		total++
		// finished first: c.done is the client goroutine's until it returned.
		if !c.finished.Load() || c.done < l.Len() {
			n++
		}
	}
	return n, total
}

// endedBy says what ended a run that was not stopped, for a stop reason.
func (c *Config) endedBy() string {
	switch {
	case c.Transactions > 0:
		return fmt.Sprintf("-t %d transactions per client were done", c.Transactions)
	case c.Duration > 0:
		return fmt.Sprintf("the run's length (-T %s) ended", c.Duration)
	}
	return "the run ended"
}

func (g *Group) defaults() {
	if g.MaxTries < 1 {
		g.MaxTries = 1
	}
	if g.Arrival == "" {
		g.Arrival = ArrivalPoisson
	}
}

// groupIndex is the index of g in groups.
func groupIndex(groups []Group, g *Group) int {
	for i := range groups {
		if &groups[i] == g {
			return i
		}
	}
	panic("driver: client of an unknown group")
}

// connector dials for w's clients and sets each new connection up as w asks.
func connector(w workload.Workload, dial target.Dialer) func(context.Context) (*pgx.Conn, *pgconn.PgConn, error) {
	setup, _ := w.(workload.ConnSetup)
	return func(ctx context.Context) (*pgx.Conn, *pgconn.PgConn, error) {
		conn, err := dial(ctx)
		if err != nil {
			return nil, nil, err
		}
		if setup != nil {
			if err := setup.SetupConn(ctx, conn); err != nil {
				conn.Close(context.Background())
				return nil, nil, err
			}
		}
		if conn == nil {
			return nil, nil, nil // a test's connection-less dialer
		}
		return conn, conn.PgConn(), nil
	}
}

// pgConnector is how the clients of g whose Workers are PgConnWorkers
// connect: nil when they connect with pgx (connector).
func pgConnector(g *Group) func(context.Context) (*pgx.Conn, *pgconn.PgConn, error) {
	if _, setup := g.Workload.(workload.ConnSetup); setup || g.DialPgConn == nil {
		return nil
	}
	dial := g.DialPgConn
	return func(ctx context.Context) (*pgx.Conn, *pgconn.PgConn, error) {
		pc, err := dial(ctx)
		return nil, pc, err
	}
}

// clientsWithPersistentConns are the clients that connect once, before the
// run (not those of a group that connects per transaction).
func clientsWithPersistentConns(clients []*client) []*client {
	var out []*client
	for _, c := range clients {
		if !c.group.ConnectPerTx {
			out = append(out, c)
		}
	}
	return out
}

// connectAll opens every client's first connection, a bounded number at a
// time, and returns the mean connection time. Failures that a retry cannot
// fix end the run before it starts; others (too many connections) leave the
// client to reconnect in its loop.
func connectAll(ctx context.Context, clients []*client, cfg *Config) (time.Duration, error) {
	var (
		mu      sync.Mutex
		total   time.Duration
		n       int
		fatal   *InitialConnectError
		refused *InitialConnectError
	)
	connect := func(c *client) {
		gostack.At8K() // dialing reaches 8 KB
		t0 := cfg.Clock.Now()
		conn, pc, err := c.connect(ctx)
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
			case class == pgerr.ClassTooManyConnections || class == pgerr.ClassAdminShutdown || class == pgerr.ClassStarting:
				if refused == nil {
					refused = &InitialConnectError{Class: class, Err: err, Refused: true, Clients: len(clients)}
				}
				refused.Failed++
				c.refused = true
			default:
				if fatal == nil {
					fatal = &InitialConnectError{Class: class, Err: err}
				}
				fatal.Failed++
			}
			return
		}
		c.conn, c.live = conn, true
		c.pg.Store(pc)
		total += d
		n++
	}
	// ConnectConcurrency goroutines connect the clients in turn: each one's
	// stack grows to the depth of pgx's connect path once, not once per
	// client (~3 stack copies, ~50 k instructions, per client otherwise).
	var next atomic.Int64
	var wg sync.WaitGroup
	gc := newConnectGC()
	for range min(max(cfg.ConnectConcurrency, 1), len(clients)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(clients)); i = next.Add(1) - 1 {
				gc.begin()
				connect(clients[i])
				gc.end()
			}
		}()
	}
	wg.Wait()
	gc.done()
	if fatal != nil {
		return 0, fatal
	}
	if refused != nil {
		refused.Connected = n
		if !cfg.ProceedWithConnected {
			return 0, refused
		}
		cfg.Notef("%s: going on with the %d clients that connected", refused.Error(), n)
	}
	if n == 0 {
		return 0, nil
	}
	return total / time.Duration(n), nil
}

func closeAll(clients []*client) {
	var conns []*pgconn.PgConn
	for _, c := range clients {
		if c.running() {
			continue // abandoned: its goroutine still owns the connection
		}
		if pc := c.pg.Swap(nil); pc != nil {
			conns = append(conns, pc)
		}
		c.conn, c.live = nil, false
	}
	// A few goroutines close them in turn (a goroutine per connection
	// costs a stack and its growth per client), all within one deadline:
	// a close past it still closes the socket, without its Terminate.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(closeConcurrency, len(conns)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(conns)); i = next.Add(1) - 1 {
				conns[i].Close(ctx)
			}
		}()
	}
	wg.Wait()
}

// closeConcurrency is how many connections closeAll closes at once.
const closeConcurrency = 32

// groupEnd closes done when the last of a group's clients has finished
// (Group.After).
type groupEnd struct {
	left atomic.Int64
	done chan struct{}
}

func (e *groupEnd) clientDone() {
	if e.left.Add(-1) == 0 {
		close(e.done)
	}
}

// groupEnds makes each group's groupEnd; a group with no clients here (a
// segment's share) has ended.
func groupEnds(groups []Group, clients []*client) []*groupEnd {
	ends := make([]*groupEnd, len(groups))
	for i := range ends {
		ends[i] = &groupEnd{done: make(chan struct{})}
	}
	for _, c := range clients {
		ends[groupIndex(groups, c.group)].left.Add(1)
	}
	for _, e := range ends {
		if e.left.Load() == 0 {
			close(e.done)
		}
	}
	return ends
}
