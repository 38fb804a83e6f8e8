package driver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/workload"
)

// RunGroups is Run with several client groups. Client ids (and so their
// random streams) run on across groups in order.
//
// A run goes through its phases in order: connect the clients, wait for
// the start, launch the clients and the open-loop dispatchers, measure
// (ticks, the planned end, stops and the drain), then collect the result.
func RunGroups(ctx context.Context, groups []Group, cfg Config, rec *metrics.Recorder) (Result, error) {
	r, err := newRun(ctx, groups, cfg, rec)
	if err != nil {
		return Result{}, err
	}
	if err := r.connect(ctx); err != nil {
		closeAll(r.clients)
		return r.res, err
	}
	if !waitForStart(ctx, r.cfg.Clock, r.cfg.StartAt, r.cfg.Notef) {
		closeAll(r.clients)
		return r.res, ctx.Err()
	}
	r.begin()
	r.launch(ctx)
	defer r.cancelRunCtx()
	defer r.stopClocks()
	r.measure(ctx)
	return r.collect(), nil
}

// groupRun is one RunGroups call: its clients and the state its phases share.
// Only the goroutine of RunGroups touches it, apart from the clients'
// shared counters (connected, pacingIgnored).
type groupRun struct {
	cfg    Config // the clients point here
	groups []Group
	rec    *metrics.Recorder
	res    Result

	clients []*client // those that run (refused ones left out)
	all     []*client // with those refused, for unfinishedLists
	ids     []int     // each client's id in the whole run
	total   int       // the whole run's clients over every group

	connected     atomic.Int64
	pacingIgnored atomic.Bool
	pacingNoted   bool

	start, plannedEnd time.Time
	rules             []Rule

	// stopNew tells clients to start no new transaction; cancelRunCtx
	// cancels transactions in flight (pgx sends a cancel request and
	// closes).
	stopNew      chan struct{}
	cancelRunCtx context.CancelFunc
	queues       []chan time.Time // each open-loop group's arrivals
	done         chan struct{}    // closed when every client has returned

	tick       *ticker
	endClock   *clock.Timer
	endTimer   <-chan time.Time
	drainTimer <-chan time.Time
	// graceTimer ends the wait for the statements cancelled by cancelRun's
	// cancel requests; then their sockets are interrupted.
	graceTimer <-chan time.Time
	graceOver  chan struct{}  // closed when the sockets are interrupted
	cancels    sync.WaitGroup // cancel requests in flight
	// abandonTimer bounds the wait for clients after cancelRun: a worker
	// stuck outside any socket (a fake, a bug) cannot hang the run.
	abandonTimer <-chan time.Time

	// measured is set once the measured time has ended (at res.Measured);
	// the intervals after it are the drain. lastCut is the last interval's
	// end. stopping is set once clients were told to stop.
	measured, stopping bool
	endTold            bool // Config.OnEnd was told
	lastCut            time.Time
}

// newRun checks the configuration and makes this segment's clients.
func newRun(ctx context.Context, groups []Group, cfg Config, rec *metrics.Recorder) (*groupRun, error) {
	cfg.defaults()
	groups = append([]Group(nil), groups...)
	for i := range groups {
		groups[i].defaults()
	}
	if err := cfg.validate(groups); err != nil {
		return nil, err
	}
	r := &groupRun{cfg: cfg, groups: groups, rec: rec}
	// Statements run under a context that cannot be cancelled (see
	// client.run); one for all clients.
	r.cfg.stmtCtx = context.WithoutCancel(ctx)
	r.cfg.windowEnd = new(atomic.Pointer[time.Time])
	budget := newReconnectLimiter(r.cfg.ReconnectRate)
	for gi := range r.groups {
		g := &r.groups[gi]
		connect, connectPg := connector(g.Workload, g.Dial), pgConnector(g)
		lo, hi := r.cfg.Segment.Block(g.Clients)
		for k := lo; k < hi; k++ {
			// The id in the whole run: same random stream in any segment.
			i := r.total + k
			r.clients = append(r.clients, &client{
				id:          i,
				worker:      g.Workload.NewWorker(i, rand.New(rand.NewPCG(r.cfg.Seed, uint64(i)+1))),
				connect:     connect,
				cfg:         &r.cfg,
				group:       g,
				txBase:      g.TxBase,
				retryBudget: budget,
				jitter:      rand.New(rand.NewPCG(r.cfg.Seed^0x5eed, uint64(i)+1)),
			})
			c := r.clients[len(r.clients)-1]
			if pgw, ok := c.worker.(workload.PgConnWorker); ok && connectPg != nil {
				c.pgw, c.connect = pgw, connectPg
			}
			rec.InitHandle(&c.handle)
			r.ids = append(r.ids, i)
		}
		r.total += g.Clients
	}
	r.all = slices.Clone(r.clients)
	return r, nil
}

// connect opens the clients' first connections (not those of groups that
// connect per transaction); clients the server refused
// (ProceedWithConnected) sit the run out: retrying would only repeat the
// refusal.
func (r *groupRun) connect(ctx context.Context) error {
	if persistent := clientsWithPersistentConns(r.clients); len(persistent) > 0 {
		mean, err := connectAll(ctx, persistent, &r.cfg)
		if err != nil {
			return err
		}
		r.res.InitialConnect = mean
		kept := r.clients[:0]
		for _, c := range r.clients {
			if c.refused {
				r.res.NotConnected++
				continue
			}
			kept = append(kept, c)
		}
		r.clients = kept
	}
	for _, c := range r.clients {
		c.connected = &r.connected
		c.pacer, c.paced = c.worker.(workload.Pacer)
		c.pacingIgnored = &r.pacingIgnored
		if c.live {
			r.connected.Add(1)
			c.useConn()
		}
	}
	return nil
}

// begin starts the measured time: the Recorder, warm-up, planned end and
// each client's ramp start.
func (r *groupRun) begin() {
	if r.cfg.BeforeStart != nil {
		r.cfg.BeforeStart()
	}
	r.start = r.cfg.Clock.Now()
	r.lastCut = r.start
	r.rec.Begin(r.start)
	if r.cfg.Warmup > 0 {
		r.rec.SetWarmupEnd(r.start.Add(r.cfg.Warmup))
	}
	r.res.Start = r.start
	if length := r.cfg.length(r.groups); length > 0 {
		r.plannedEnd = r.start.Add(length)
		r.cfg.windowEnd.Store(&r.plannedEnd)
	}
	r.rules = append([]Rule(nil), r.cfg.Autostop...)
	for i, c := range r.clients {
		if r.cfg.Ramp > 0 && r.total > 1 {
			c.startAt = rampStart(r.start, r.cfg.Ramp, r.ids[i], r.total)
		}
	}
	if r.cfg.OnStart != nil {
		r.cfg.OnStart(r.start)
	}
}

// launch starts each open-loop group's dispatcher, every client's
// goroutine, the end timer and the ticker.
func (r *groupRun) launch(ctx context.Context) {
	r.stopNew = make(chan struct{})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancelRunCtx = cancel
	r.queues = make([]chan time.Time, len(r.groups))
	for gi := range r.groups {
		g := &r.groups[gi]
		if g.Schedule.Empty() {
			continue
		}
		r.queues[gi] = make(chan time.Time, r.cfg.QueueCap)
		go dispatch(r.cfg.Clock, r.start, g.Schedule, g.Arrival, r.cfg.Seed+uint64(gi)*0x9e3779b97f4a7c15, r.cfg.Segment,
			int64(r.cfg.Transactions)*int64(g.Clients), r.queues[gi], r.stopNew)
	}
	finished := groupEnds(r.groups, r.clients)
	var wg sync.WaitGroup
	for _, c := range r.clients {
		wg.Add(1)
		c.started = true
		c.model = closedLoop{cfg: &r.cfg}
		gi := groupIndex(r.groups, c.group)
		if q := r.queues[gi]; q != nil {
			c.model = openLoop{queue: q, limit: r.cfg.Transactions}
		}
		if after := c.group.After; after != "" {
			c.gate = finished[slices.IndexFunc(r.groups, func(g Group) bool { return g.Name == after })].done
		}
		c.end, c.wg = finished[gi], &wg
		c.growStack = !c.smallStack()
		go c.loop(runCtx, r.stopNew)
	}
	r.done = make(chan struct{})
	go func() { wg.Wait(); close(r.done) }()

	r.tick = newTicker(r.start, r.cfg.Tick, r.cfg.Clock)
	// A planned end on a tick is the tick's (measure): with the ticker
	// on an alarm, no timer of the runtime's is then pending.
	if !r.plannedEnd.IsZero() && (r.tick.alarm == nil || r.plannedEnd.Sub(r.start)%r.cfg.Tick != 0) {
		r.endClock = r.cfg.Clock.NewTimer(clock.Until(r.cfg.Clock, r.plannedEnd))
		r.endTimer = r.endClock.C
	}
}

// stopClocks stops the end timer and the ticker.
func (r *groupRun) stopClocks() {
	if r.endClock != nil {
		r.endClock.Stop()
	}
	r.tick.stop()
}

// measure cuts intervals until every client has returned (or the ones
// left were abandoned), ending the measured time at the planned end, an
// autostop or a stop, and the drain after it.
func (r *groupRun) measure(ctx context.Context) {
	ctxDone := ctx.Done()
	for {
		select {
		case now := <-r.tick.C:
			if !now.After(r.lastCut) {
				continue // the measured time ended at this very tick
			}
			if !r.measured && !r.plannedEnd.IsZero() && !now.Before(r.plannedEnd) {
				// The tick at the planned end came before its timer (or
				// there is none: launch).
				r.endMeasured(r.plannedEnd)
				r.beginStop("", false)
				continue
			}
			r.emit(now)
		case <-r.endTimer:
			r.endTimer = nil
			r.endMeasured(r.plannedEnd)
			r.beginStop("", false)
		case <-ctxDone:
			ctxDone = nil
			r.interrupted(ctx)
		case <-r.drainTimer:
			r.drainTimer = nil
			r.cfg.Notef("transactions still running %s after the measured time were cancelled", r.cfg.Drain)
			r.cancelRun()
		case <-r.graceTimer:
			r.graceTimer = nil
			r.interruptAll()
		case <-r.abandonTimer:
			r.abandon()
			return
		case <-r.done:
			return
		}
	}
}

// emit cuts the interval ending at now, hands it over and lets the
// autostop rules see it.
func (r *groupRun) emit(now time.Time) {
	if !r.pacingNoted && r.pacingIgnored.Load() {
		r.pacingNoted = true
		r.cfg.Notef("keying and think times do not apply to an open loop (the schedule sets the arrivals); ignored")
	}
	iv := r.rec.Tick(now)
	r.lastCut = now
	iv.Drain = r.measured
	iv.Connected = int(r.connected.Load())
	if iv.Duration() > 0 {
		from, to := iv.Start.Sub(r.start), iv.End.Sub(r.start)
		for gi := range r.groups {
			if s := r.groups[gi].Schedule; !s.Empty() {
				iv.TargetRate += (s.Expected(to) - s.Expected(from)) / iv.Duration().Seconds() / float64(max(r.cfg.Segment.Count, 1))
			}
		}
	}
	r.cfg.OnInterval(iv)
	for i := range r.rules {
		rule := &r.rules[i]
		fired := false
		if rule.IsSampled() {
			fired = rule.observeSampled(&iv, r.cfg.Sampled)
		} else {
			fired = rule.observe(&iv)
		}
		if fired {
			r.autostop(rule.Text)
			break
		}
	}
}

// endMeasured ends the measured time at t (not after now): the last
// measured interval ends there, what is still running is unfinished.
func (r *groupRun) endMeasured(t time.Time) {
	if r.measured {
		return
	}
	if r.cfg.OnEnd != nil && !r.endTold {
		r.endTold = true // an autostop in the last interval comes back here
		end := t
		if end.Before(r.lastCut) {
			end = r.lastCut
		}
		r.cfg.OnEnd(end)
	}
	if we := r.cfg.windowEnd.Load(); we == nil || t.Before(*we) {
		r.cfg.windowEnd.Store(&t)
	}
	if t.After(r.lastCut) {
		r.emit(t)
	}
	r.measured, r.res.Measured = true, r.lastCut
}

// beginStop tells the clients to start no new transaction and starts the
// drain's deadline.
func (r *groupRun) beginStop(reason string, stopped bool) {
	if r.stopping {
		return
	}
	r.stopping = true
	r.res.Stopped, r.res.StopReason = stopped, reason
	close(r.stopNew)
	if r.cfg.Drain < 0 {
		r.cancelRun() // NoDrain
		return
	}
	t := r.cfg.Clock.NewTimer(r.cfg.Drain)
	r.drainTimer = t.C
}

// autostop ends the measured time at the last cut because rule held.
func (r *groupRun) autostop(rule string) {
	if !r.stopping {
		r.res.Autostopped = true
		r.cfg.Notef("autostop: %s", rule)
		r.endMeasured(r.lastCut)
		r.beginStop(rule, true)
	}
}

// interrupted stops the run now because ctx was cancelled.
func (r *groupRun) interrupted(ctx context.Context) {
	reason := "interrupted"
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		reason = cause.Error()
	}
	if r.stopping && !r.res.Stopped {
		// The measured time was over: the run stops in its drain.
		r.res.Stopped, r.res.StopReason = true, reason+" during the drain after the measured time"
	}
	r.endMeasured(r.cfg.Clock.Now())
	r.beginStop(reason, true)
	// A user stop does not wait for slow transactions.
	r.cancelRun()
}

// cancelRun cancels the transactions in flight and starts the deadline
// for the clients to return: first by cancel requests to the server of
// each running client, repeated while it runs (cancelUntilDone; its
// statement fails with the server's own 57014, kept with the failure),
// then, cancelGrace later (at once when no request was sent), by
// interrupting their sockets, which ends any wait.
func (r *groupRun) cancelRun() {
	if r.abandonTimer != nil {
		return // already cancelled
	}
	r.cancelRunCtx()
	r.abandonTimer = r.cfg.Clock.NewTimer(abandonAfter).C
	over := make(chan struct{})
	r.graceOver = over
	sent := false
	for _, c := range r.clients {
		if c.running() && c.pg.Load() != nil {
			sent = true
			r.cancels.Add(1)
			go func() { defer r.cancels.Done(); c.cancelUntilDone(r.cfg.Clock, over, r.done) }()
		}
	}
	if !sent {
		r.interruptAll()
		return
	}
	r.graceTimer = r.cfg.Clock.NewTimer(cancelGrace).C
}

// interruptAll interrupts every client's socket (client.interrupt) and
// ends the cancel requests' repeats.
func (r *groupRun) interruptAll() {
	if r.graceOver != nil {
		close(r.graceOver)
		r.graceOver = nil
	}
	for _, c := range r.clients {
		c.interrupt()
	}
}

// abandon gives up on the clients that did not return after cancelRun.
func (r *groupRun) abandon() {
	stuck := 0
	for _, c := range r.clients {
		if !c.finished.Load() {
			stuck++
		}
	}
	r.cfg.Notef("%d client(s) did not stop %s after being cancelled; ending the run without them", stuck, abandonAfter)
	r.res.Abandoned = stuck
}

// collect cuts the final interval, closes the connections and completes
// the result.
func (r *groupRun) collect() Result {
	res := &r.res
	res.End = r.cfg.Clock.Now()
	if !r.measured {
		// -t, or every client's list done: the measured time ends with
		// the last client.
		r.endMeasured(res.End)
	} else {
		r.emit(res.End)
	}
	for _, q := range r.queues {
		res.Unstarted += int64(len(q))
	}
	if res.Unstarted > 0 {
		r.cfg.Notef("%d scheduled transactions were due but never started (all clients busy)", res.Unstarted)
	}
	r.cancels.Wait() // each bounded by cancelGrace
	closeAll(r.clients)
	for _, c := range r.clients {
		res.Reconnects += c.reconnects
	}
	if n, total := unfinishedLists(r.all); n > 0 && !res.Stopped {
		// The run's planned length is its clients' lists (workload.Lister):
		// ended before them, it is cut short whatever ended it.
		res.Stopped = true
		res.StopReason = fmt.Sprintf("%d of %d clients had not finished their transaction lists when %s", n, total, r.cfg.endedBy())
	}
	return *res
}
