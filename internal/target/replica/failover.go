package replica

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/await"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/target"
)

// LedgerTable is the table the failover ledger writes on the primary.
const LedgerTable = "pgarena_ledger"

// ledgerMark is the ledger's comment: pgarena's mark, as the heartbeat's.
const ledgerMark = "pgarena: failover ledger"

// DefaultFailoverTimeout bounds the promotion and the first commit on the
// new primary.
const DefaultFailoverTimeout = 2 * time.Minute

// ledgerRetry spaces the ledger client's attempts while no server takes
// its writes: it bounds how precisely the downtime is measured.
const ledgerRetry = 20 * time.Millisecond

// Failover stops the primary during the run, promotes a standby, and
// measures what it cost: the downtime (fault to first commit on the new
// primary) and the acknowledged commits the new primary lacks, counted by
// a ledger client (Start).
type Failover struct {
	// After is when the fault comes: this long after the origin Arm gives
	// (the start of the measured time).
	After time.Duration
	// Command, when set, is the fault (run with sh -c); otherwise Crash
	// stops the primary (an immediate shutdown of a cluster pgarena runs).
	Command string
	Crash   func(ctx context.Context) error
	// Primary reaches the primary (before the fault); Standby the server
	// to promote, or that the user's orchestrator promotes (External).
	Primary, Standby *pgx.ConnConfig
	External         bool
	// Clients is the multi-host configuration the clients follow the
	// primary with (FollowConfig); the ledger client writes through it.
	Clients *pgx.ConnConfig
	Timeout time.Duration // DefaultFailoverTimeout when 0
	Notef   func(format string, args ...any)
	// BeforeFault, when set, is called just before the fault (stop what
	// writes to the old primary and would only report its absence).
	BeforeFault func()
	// OnEvent, when set, is told of the fault, the promotion and the first
	// commit on the new primary as they happen (metrics.FailoverFault,
	// FailoverPromoted, FailoverFirstCommit).
	OnEvent func(event string, at time.Time)

	mu         sync.Mutex
	acked      []int64
	doubt      []int64
	origin     time.Time // Arm's: the fault is due After from it
	until      time.Time // Arm's: the fault begins before it (zero: no limit)
	armed      bool
	wake       chan struct{} // Arm and Disarm wake the fault's timer
	faultFrom  time.Time     // the origin the fault came from (FaultAtS)
	faultAt    time.Time
	downAt     time.Time // the fault done: the old primary takes no connection
	firstOK    time.Time // first ledger commit on a connection opened after downAt
	quit       chan struct{}
	ledgerDone chan struct{}
	runDone    chan struct{} // closed when the fault, promotion and first commit are followed
	fo         metrics.Failover
	stop       context.CancelFunc
	done       sync.WaitGroup
}

// FollowConfig is the configuration clients follow a failover with: the
// primary first, then the standby, and only a server that takes writes
// (target_session_attrs=read-write). A primary that already names several
// hosts (the user's multi-host DSN) is kept as it is, read-write enforced.
func FollowConfig(primary, standby *pgx.ConnConfig) *pgx.ConnConfig {
	c := primary.Copy()
	if len(c.Fallbacks) == 0 {
		c.Fallbacks = []*pgconn.FallbackConfig{{Host: standby.Host, Port: standby.Port, TLSConfig: standby.TLSConfig}}
	}
	c.ValidateConnect = pgconn.ValidateConnectTargetSessionAttrsReadWrite
	return c
}

// Prepare checks what the failover needs and creates the ledger table
// (marked; emptied when pgarena made it before) on the primary.
func (f *Failover) Prepare(ctx context.Context) error {
	if f.Command == "" && f.Crash == nil {
		return errors.New("--failover stops the primary with an immediate shutdown only for a cluster pgarena runs (the embedded one); for another primary, say how to stop it with --failover-command")
	}
	if f.Timeout <= 0 {
		f.Timeout = DefaultFailoverTimeout
	}
	if f.Notef == nil {
		f.Notef = func(string, ...any) {}
	}
	conn, err := target.Connect(ctx, f.Primary, "pgarena-ledger")
	if err != nil {
		return fmt.Errorf("failover ledger: %w", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	var mark *string
	if err := conn.QueryRow(ctx, `select to_regclass($1) is not null, obj_description(to_regclass($1), 'pg_class')`, LedgerTable).Scan(&exists, &mark); err != nil {
		return fmt.Errorf("failover ledger: %w", err)
	}
	switch {
	case exists && (mark == nil || *mark != ledgerMark):
		return fmt.Errorf("a table %s exists that pgarena did not create (no pgarena mark): pgarena will not write to it; rename or drop it", LedgerTable)
	case exists:
		_, err = conn.Exec(ctx, `truncate `+LedgerTable)
	default:
		_, err = conn.Exec(ctx, `create table `+LedgerTable+` (id bigint primary key, at timestamptz not null default clock_timestamp());
			comment on table `+LedgerTable+` is '`+ledgerMark+`'`)
	}
	if err != nil {
		return fmt.Errorf("failover ledger: %w", err)
	}
	return nil
}

// Start starts the ledger client and the fault's timer, which waits
// for Arm.
func (f *Failover) Start(ctx context.Context) {
	ctx, f.stop = context.WithCancel(ctx)
	f.wake = make(chan struct{}, 1)
	f.fo = metrics.Failover{Fault: "immediate shutdown", Promotion: "pg_promote"}
	if f.Command != "" {
		f.fo.Fault = "command"
	}
	if f.External {
		f.fo.Promotion = "external"
	}
	f.quit, f.ledgerDone, f.runDone = make(chan struct{}), make(chan struct{}), make(chan struct{})
	f.done.Add(2)
	go func() { defer f.done.Done(); defer close(f.ledgerDone); f.ledger(ctx) }()
	go func() { defer f.done.Done(); defer close(f.runDone); f.run(ctx) }()
}

// Arm arms the fault: it comes After from origin, the start of the
// measured time (FaultAtS counts from there), if that is before until
// (zero: no limit), the end of the measured time. It replaces the last Arm.
func (f *Failover) Arm(origin, until time.Time) {
	f.mu.Lock()
	f.origin, f.until, f.armed = origin, until, true
	f.mu.Unlock()
	f.poke()
}

// Disarm: the measured time ended, the fault does not begin before the
// next Arm.
func (f *Failover) Disarm() {
	f.mu.Lock()
	f.armed = false
	f.mu.Unlock()
	f.poke()
}

func (f *Failover) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// syncLead is how long before the fault the standby's sync state is read
// (a connection to the primary), so that the fault comes on time.
const syncLead = time.Second

// due waits, while the fault is armed, until lead before it is due, and
// returns the origin it is armed with; false when ctx ended first. With
// take the fault is decided, under mu so that none begins after Disarm
// returned, and the Arm is used up.
func (f *Failover) due(ctx context.Context, lead time.Duration, take bool) (time.Time, bool) {
	for {
		f.mu.Lock()
		armed, origin, until := f.armed, f.origin, f.until
		at := origin.Add(f.After - lead)
		now := time.Now()
		switch {
		case armed && !until.IsZero() && !now.Before(until):
			f.armed, armed = false, false // too late for this measured time
		case armed && !now.Before(at):
			if take {
				f.armed, f.faultFrom = false, origin
			}
			f.mu.Unlock()
			return origin, true
		}
		f.mu.Unlock()
		var timer *time.Timer
		var fire <-chan time.Time
		if armed {
			timer = time.NewTimer(at.Sub(now))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
		case <-f.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return time.Time{}, false
		}
	}
}

// ledger inserts ids 1, 2, ... one transaction each, through Clients,
// and records which commits were acknowledged and which got no answer.
func (f *Failover) ledger(ctx context.Context) {
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	// onNew: conn was opened after the old primary went down, so it
	// reaches the new primary.
	onNew := false
	for id := int64(1); ctx.Err() == nil; {
		select {
		case <-f.quit:
			return
		default:
		}
		if conn == nil {
			f.mu.Lock()
			down := !f.downAt.IsZero()
			f.mu.Unlock()
			c, err := target.Connect(ctx, f.Clients, "pgarena-ledger")
			if err != nil {
				sleepCtx(ctx, ledgerRetry)
				continue
			}
			conn, onNew = c, down
		}
		_, err := conn.Exec(ctx, `insert into `+LedgerTable+` (id) values ($1)`, id)
		now := time.Now()
		f.mu.Lock()
		switch {
		case err == nil:
			f.acked = append(f.acked, id)
			if onNew && f.firstOK.IsZero() {
				f.firstOK = now
			}
		case ctx.Err() != nil:
			// stopped by the end of the run: the answer is not known
			f.doubt = append(f.doubt, id)
		default:
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || conn.IsClosed() {
				f.doubt = append(f.doubt, id)
			}
		}
		f.mu.Unlock()
		id++
		if err == nil {
			// at most one ledger transaction a millisecond: enough to
			// time the downtime, little load beside the workload's
			sleepCtx(ctx, time.Until(now.Add(time.Millisecond)))
		} else {
			conn.Close(context.Background())
			conn = nil
			sleepCtx(ctx, ledgerRetry)
		}
	}
}

// run waits for the fault (Arm), stops the primary, promotes the standby (or waits
// for its promotion) and for the first commit on it.
func (f *Failover) run(ctx context.Context) {
	early, ok := f.due(ctx, syncLead, false)
	if ok {
		f.fo.Replication = syncState(ctx, f.Primary, f.Standby)
	}
	origin, ok := f.due(ctx, 0, true)
	if !ok {
		f.fo.Problem = fmt.Sprintf("the measured time ended before the fault was due (%s into it)", f.After)
		return
	}
	if !origin.Equal(early) { // armed again since (a sweep's next step)
		f.fo.Replication = syncState(ctx, f.Primary, f.Standby)
	}
	if f.BeforeFault != nil {
		f.BeforeFault()
	}
	f.Notef("failover: stopping the primary (%s) %s into the measured time", f.fo.Fault, f.After)
	f.mu.Lock()
	f.faultAt = time.Now()
	f.mu.Unlock()
	f.event(metrics.FailoverFault, f.faultAt)
	if err := f.fault(ctx); err != nil {
		f.fo.Problem = "the fault failed: " + err.Error()
		f.Notef("failover: %v", err)
		return
	}
	f.mu.Lock()
	f.downAt = time.Now()
	f.mu.Unlock()
	w := await.Wait{What: "the standby to be promoted", Timeout: f.Timeout, Flag: "--failover-timeout", Notef: f.Notef}.Start()
	for {
		promoted, err := f.promote(ctx)
		if promoted {
			break
		}
		msg := "still in recovery"
		if err != nil {
			msg = err.Error()
		}
		if w.Expired() || ctx.Err() != nil {
			f.fo.Problem = "the standby was not promoted within " + f.Timeout.String() + ": " + msg
			f.Notef("failover: %s", f.fo.Problem)
			return
		}
		w.Report(msg)
		sleepCtx(ctx, 100*time.Millisecond)
	}
	promotedAt := time.Now()
	f.fo.PromotedS = promotedAt.Sub(f.faultAt).Seconds()
	f.event(metrics.FailoverPromoted, promotedAt)
	f.Notef("failover: the standby is the primary %.2f s after the fault", f.fo.PromotedS)
	w = await.Wait{What: "the first commit on the new primary", Timeout: f.Timeout, Flag: "--failover-timeout", Notef: f.Notef}.Start()
	for {
		f.mu.Lock()
		first := f.firstOK
		f.mu.Unlock()
		if !first.IsZero() {
			f.event(metrics.FailoverFirstCommit, first)
			return
		}
		if w.Expired() || ctx.Err() != nil {
			f.fo.Problem = "no commit on the new primary within " + f.Timeout.String() + " of its promotion"
			return
		}
		w.Report("the ledger client is reconnecting")
		sleepCtx(ctx, 10*time.Millisecond)
	}
}

// event tells OnEvent.
func (f *Failover) event(name string, at time.Time) {
	if f.OnEvent != nil {
		f.OnEvent(name, at)
	}
}

func (f *Failover) fault(ctx context.Context) error {
	if f.Command == "" {
		return f.Crash(ctx)
	}
	cctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	out, err := exec.CommandContext(cctx, "sh", "-c", f.Command).CombinedOutput()
	if err != nil {
		return fmt.Errorf("--failover-command %q: %v: %s", f.Command, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// promote reports whether the standby has left recovery; pgarena asks it
// to (pg_promote) unless the user's orchestrator does.
func (f *Failover) promote(ctx context.Context) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	conn, err := target.Connect(cctx, f.Standby, "pgarena-failover")
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	var recovery bool
	if err := conn.QueryRow(cctx, `select pg_is_in_recovery()`).Scan(&recovery); err != nil || !recovery {
		return err == nil, err
	}
	if f.External {
		return false, nil
	}
	var ok bool
	err = conn.QueryRow(cctx, `select pg_promote(true, $1)`, int(f.Timeout.Seconds())).Scan(&ok)
	return ok && err == nil, err
}

// syncState is the standby's sync_state on the primary (the walsender
// whose client is the standby: its application_name, else the only one).
func syncState(ctx context.Context, primary, standby *pgx.ConnConfig) string {
	cctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	conn, err := target.Connect(cctx, primary, "pgarena-failover")
	if err != nil {
		return ""
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(cctx, `select application_name, sync_state from pg_stat_replication`)
	if err != nil {
		return ""
	}
	var names, states []string
	var name, state string
	pgx.ForEachRow(rows, []any{&name, &state}, func() error {
		names, states = append(names, name), append(states, state)
		return nil
	})
	if i := slices.Index(names, standby.RuntimeParams["application_name"]); i >= 0 {
		return states[i]
	}
	if len(states) == 1 {
		return states[0]
	}
	return ""
}

// stopGrace bounds how long Stop waits for the watcher to see a promotion.
const stopGrace = 10 * time.Second

// Stop ends the ledger client and the failover, then counts the
// acknowledged commits the new primary lacks. intervals are the
// workload's (for the failures during the downtime and the recovery of
// the rate).
func (f *Failover) Stop(ctx context.Context, intervals []metrics.Interval) *metrics.Failover {
	// The ledger's last transaction finishes; then the rest stops.
	close(f.quit)
	select {
	case <-f.ledgerDone:
	case <-time.After(15 * time.Second):
	}
	// After a fault, the promotion and first commit the servers already
	// went through are seen before the rest stops: the watcher polls, and
	// may be a poll (and a connection) behind the ledger.
	f.mu.Lock()
	faulted := !f.faultAt.IsZero()
	f.mu.Unlock()
	if faulted {
		select {
		case <-f.runDone:
		case <-time.After(stopGrace):
		}
	}
	f.stop()
	f.done.Wait()
	fo := f.fo
	if f.faultAt.IsZero() {
		return &fo
	}
	fo.FaultAtS = f.faultAt.Sub(f.faultFrom).Seconds()
	if !f.firstOK.IsZero() {
		fo.DowntimeS = f.firstOK.Sub(f.faultAt).Seconds()
	}
	fo.LedgerAcked, fo.InDoubt = int64(len(f.acked)), int64(len(f.doubt))
	end := f.firstOK
	if end.IsZero() {
		end = time.Now()
	}
	during(&fo, f.faultAt, end, intervals)
	if fo.Problem != "" && f.firstOK.IsZero() {
		return &fo
	}
	cctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	conn, err := target.Connect(cctx, f.Standby, "pgarena-ledger")
	if err == nil {
		defer conn.Close(context.Background())
		var have, kept int64
		err = conn.QueryRow(cctx, `select count(*) filter (where id = any($1)), count(*) filter (where id = any($2)) from `+LedgerTable,
			f.acked, f.doubt).Scan(&have, &kept)
		fo.AckedLost, fo.InDoubtKept = fo.LedgerAcked-have, kept
	}
	if err != nil {
		fo.Problem = strings.TrimPrefix(fo.Problem+"; the ledger could not be checked on the new primary: "+err.Error(), "; ")
	}
	return &fo
}

// during counts the failures of the intervals that overlap the downtime
// [from, to], and finds when the rate came back to 90% of its median over
// the measured intervals before the fault (metrics.Failover.RecoveredS).
func during(fo *metrics.Failover, from, to time.Time, intervals []metrics.Interval) {
	var before []float64
	for _, iv := range intervals {
		var committed int64
		var errs metrics.ErrorCounts
		for i := range iv.Tx {
			committed += iv.Tx[i].Count
			errs.Add(&iv.Tx[i].Errors)
		}
		rate := float64(committed) / iv.End.Sub(iv.Start).Seconds()
		switch {
		case !iv.End.After(from):
			if !iv.Warmup {
				before = append(before, rate)
			}
		case !iv.Start.After(to):
			fo.ErrorsDuring.Add(&errs)
		case fo.RecoveredS == 0 && len(before) > 0:
			if rate >= 0.9*median(before) {
				fo.RecoveredS = iv.End.Sub(from).Seconds()
			}
		}
	}
	fo.FailedDuring = fo.ErrorsDuring.Total()
}

// median of xs (sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// sleepCtx sleeps for d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
