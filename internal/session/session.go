// Package session runs one benchmark end to end, without a command line:
// it records the run's spec, provisions the target, loads the workloads if
// asked, starts the samplers, drives the client groups through the load
// model (step by step in a sweep), fans every interval and sample out to
// the outputs (the store first), and records the summary and findings.
//
// The CLI turns flags into a Spec and prints; a plan runner or a web server
// calls Run the same way. This package never prints: notes go to
// Hooks.Notef, records to Outputs.
package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/sampler"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// Spec is what to run.
type Spec struct {
	// Record is what the run spec records besides what Run fills in
	// (workload, parameters, clients, target, creation time): version,
	// command line (redacted), label, threads, host, load model.
	Record store.RunSpec
	// Groups are the client groups; one at least. With several, each
	// group's transaction types are recorded as "group/type" and the
	// summary has a part per group.
	Groups []Group
	// Steps, when more than one, make a sweep: one driver run per step,
	// each with the step's clients and load model for the (only) group.
	Steps []Step

	Duration     time.Duration // per step; 0 with Transactions
	Transactions int           // per client
	Tick         time.Duration // interval length
	Warmup       time.Duration
	Ramp         time.Duration
	Autostop     []driver.Rule
	Seed         uint64

	// Drain is how long transactions still running at the end of a
	// step's measured time may take to finish (driver.Config.Drain: 0 the
	// default, driver.NoDrain none).
	Drain time.Duration
	// Segment runs only this process's share of the run (--segment i/N);
	// StartAt is when measuring starts, shared by the segments (--start-at;
	// the first step of a sweep).
	Segment driver.Segment
	StartAt time.Time
	// SegmentOf is the identity of the whole run a segment belongs to,
	// the same in every segment (recorded; pgarena merge joins only
	// segments of one run).
	SegmentOf string
	// StatementLatencies reports per-command latencies of script
	// workloads (pgbench -r) in the summary.
	StatementLatencies bool

	// MaxErrorRate is the share of failed transactions (0 to 1) above
	// which a run that ran its length is degraded rather than complete
	// (0: DefaultMaxErrorRate).
	MaxErrorRate float64
	// ProceedWithConnected goes on with the clients that connected when
	// the server refuses some (see driver.Config); by default such a run
	// fails before measuring.
	ProceedWithConnected bool

	Init        bool // load the workloads first (always for a target created for the run)
	LoadWorkers int
	Check       bool // run the workloads' consistency checks after a complete run

	// SampleEvery is the server and host sampling interval (0: off).
	SampleEvery time.Duration
	// CitusWorkers, when set, are the Citus workers to sample (--worker-dsn)
	// in place of the coordinator's active workers at their pg_dist_node
	// addresses.
	CitusWorkers []*pgx.ConnConfig
	// CatchUpTimeout bounds the wait for the target's replicas after each
	// step (0: DefaultCatchUpTimeout).
	CatchUpTimeout time.Duration
	// Failover, when set, stops the primary during the run and promotes
	// its standby (--failover).
	Failover *Failover
	// NetIO is the clients' socket I/O mode.
	NetIO netio.Mode
	// Jobs is -j: the threads the clients run on (GOMAXPROCS for the run,
	// at most the clients and the cores; the run spec records what ran);
	// 0 keeps GOMAXPROCS as it is.
	Jobs int
	// AdaptProcs adds Ps while clients need CPU (see netio.AdaptProcs).
	AdaptProcs bool
	// Figures, with several groups, reports the run's figures of merit (a
	// workload.Grouper's whole workload; committed counts are then named
	// "group/type"). Nil: figures only for a run of one group.
	Figures workload.FigureReporter
	// TxLog, when not nil, writes pgbench's transaction logs (-l); their
	// paths are recorded in the run spec (Load["pgbench_logs"]).
	TxLog *TxLog

	Hooks Hooks
}

// Group is one client group: its workload, clients, load model and query
// protocol.
type Group struct {
	Name     string // required with several groups
	Workload workload.Workload
	Clients  int
	// Schedule makes the group open-loop (see driver.Config).
	Schedule     driver.Schedule
	Arrival      string
	LatencyLimit time.Duration
	QueryMode    string // simple, extended or prepared
	ConnectPerTx bool
	MaxTries     int
	// Replica, when set, sends the group's clients to the target's first
	// replica of this kind instead of the target (--read-dsn: read-only
	// transactions to a replica, kind "read").
	Replica string
	// After names an earlier group whose clients must have finished before
	// this group's start (driver.Group.After).
	After string
	// Settings are session settings (--session-set) sent as startup
	// parameters on every connection the group's clients open.
	Settings map[string]string
}

// DefaultMaxErrorRate is the share of failed transactions above which a
// run is degraded.
const DefaultMaxErrorRate = 0.10

// Step is one step of a sweep.
type Step struct {
	Clients  int
	Rate     float64 // 0: closed loop or a schedule
	Schedule driver.Schedule
}

func (s Step) String() string {
	if s.Rate > 0 {
		return fmt.Sprintf("%d clients at %g tx/s", s.Clients, s.Rate)
	}
	return fmt.Sprintf("%d clients", s.Clients)
}

// Hooks are the synchronous callbacks of a run (all optional).
type Hooks struct {
	// Notef receives notes for the user.
	Notef func(format string, args ...any)
	// Created is called once the run is recorded, before the target of a
	// fresh run is provisioned.
	Created func(id, dir string)
	// Load initialises w on t when the run loads its workloads (nil:
	// loader.Init with Spec.LoadWorkers and no progress), so the caller
	// can show progress.
	Load func(ctx context.Context, t *target.Target, w workload.Workload) error
	// VerboseError, when not nil, receives a line per failed transaction
	// (pgbench --verbose-errors), at most verboseErrorsPerSecond a second,
	// from the clients' goroutines: it must not block for long.
	VerboseError func(line string)
}

// Result is how a run went.
type Result struct {
	RunID    string
	Dir      string
	Summary  metrics.Summary
	Findings []store.Finding
	// Stopped is set when the run ended before its planned length;
	// Autostopped when an autostop rule ended it.
	Stopped, Autostopped bool
	// NotRecorded is the first failure to record an interval (the run
	// went on; the results on disk are incomplete).
	NotRecorded error
	// OutputProblems lists the outputs that failed, fell behind or did
	// not drain in time, one line each (the run did not wait for them).
	OutputProblems []string
	// Checks are the consistency checks' outcomes when Spec.Check was set
	// and the run completed.
	Checks []CheckResult
}

// InputError is bad input found before anything was recorded: the target
// is not initialised for the workload, or its parameters do not fit.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputf(format string, args ...any) error { return &InputError{Msg: fmt.Sprintf(format, args...)} }

// run is one Run's state.
type run struct {
	spec   Spec
	citus  *store.CitusInfo // the target's topology when it is a Citus coordinator
	notef  func(format string, args ...any)
	tgt    *target.Target
	conn   controlConn // control connection: describe, prepare, figures, checks
	writer *store.Writer
	// recorded is the run spec as written (spec.json).
	recorded store.RunSpec
	sum      metrics.Summary
	// observer sees every transaction (pgbench -l, --verbose-errors); nil
	// without either.
	observer driver.TxObserver
	repl     *replication // nil without replicas
	fo       *failover    // nil without --failover
	// markSteady gives the sampler a step's windows of constant load
	// (nil without a sampler)
	markSteady func(...sampler.Window)
	// alignSamples gives the sampler the start of a step's intervals
	// (sampler.Align; nil without a sampler)
	alignSamples func(time.Time)
	// fanned is set once the outputs are behind the fan (which closes them).
	fanned bool
	// fan is the outputs' fan once measuring set it up (the run's own
	// outputs first, own of them): a run that fails then ends it (fail).
	fan *fanout
	own int
	// described is server.json as recorded (nil until the server is described).
	described *store.ServerInfo
	// procs owns GOMAXPROCS during the run (Spec.Jobs).
	procs *netio.RunProcs
}

// Run runs spec against the target p provides, recording it in st and
// fanning its records out to outs (after the store). Bad input found before
// anything is recorded is an *InputError. A run that fails after it was
// recorded is recorded as failed (stopped when ctx was cancelled).
func Run(ctx context.Context, spec Spec, p target.Provider, st *store.Store, outs ...Output) (Result, error) {
	r := &run{spec: spec, notef: spec.Hooks.Notef}
	if r.notef == nil {
		r.notef = func(string, ...any) {}
	}
	defer func() {
		if !r.fanned { // the fan closes them once it has them
			closeOutputs(outs, r.notef)
		}
	}()
	if err := r.spec.validate(); err != nil {
		return Result{}, err
	}
	spec = r.spec
	r.procs = netio.SetRunProcs(runThreads(spec.Jobs, spec.totalClients(), r.notef))
	defer r.procs.Restore()
	fresh := target.CreatesTarget(p)
	teardown := func() {}
	defer func() {
		if teardown != nil {
			teardown()
		}
	}()
	if !fresh {
		// An existing server is reached, and checked for the workloads,
		// before anything is recorded: bad input changes nothing.
		var err error
		if r.tgt, teardown, err = p.Provision(ctx); err != nil {
			return Result{}, err
		}
		if err := r.connect(ctx); err != nil {
			return Result{}, err
		}
		defer r.conn.Close(context.Background())
		if !spec.Init {
			if err := r.prepareExisting(ctx); err != nil {
				return Result{}, err
			}
		}
		if err := r.checkReplicas(ctx); err != nil {
			return Result{}, err
		}
	}
	if err := r.validateRun(); err != nil {
		return Result{}, err
	}
	rs := r.recordSpec(p)
	r.recorded = rs
	w, err := st.Create(rs)
	if err != nil {
		return Result{}, err
	}
	defer w.Close()
	r.writer = w
	if spec.Hooks.Created != nil {
		spec.Hooks.Created(w.ID(), w.Dir())
	}
	g0 := spec.Groups[0]
	r.sum = metrics.Summary{RunID: w.ID(), Workload: rs.Workload, Label: rs.Label, QueryMode: g0.QueryMode,
		Clients: rs.Clients, Threads: rs.Threads, Params: rs.Params, MaxTries: rs.MaxTries, Start: time.Now(),
		SessionSettings: rs.SessionSettings}
	if fresh {
		if r.tgt, teardown, err = p.Provision(ctx); err != nil {
			return r.failed(ctx, Result{}, err, outs)
		}
		if err := r.connect(ctx); err != nil {
			return r.failed(ctx, Result{}, err, outs)
		}
		defer r.conn.Close(context.Background())
	}
	defer r.keepServerLog()
	res, err := r.measure(ctx, fresh || spec.Init, outs)
	if err != nil {
		return r.failed(ctx, res, err, outs)
	}
	return res, nil
}

// failed records a run that failed after its spec was written (fail) and
// ends the caller's outputs with it.
func (r *run) failed(ctx context.Context, res Result, err error, outs []Output) (Result, error) {
	err = r.fail(ctx, err)
	r.endOutputs(outs)
	return res, err
}

// keepServerLog copies the log of a server made for the run into the run.
func (r *run) keepServerLog() {
	if r.tgt.Fresh && r.tgt.ServerLog != "" {
		if err := copyFile(r.tgt.ServerLog, r.writer.Path("server.log")); err != nil {
			r.notef("could not copy the server log into the run: %v", err)
		}
	}
}

func (s *Spec) validate() error {
	switch {
	case len(s.Groups) == 0:
		return errors.New("session: no client group")
	case len(s.Steps) > 1 && len(s.Groups) > 1:
		return inputf("a sweep runs one client group (got %d groups)", len(s.Groups))
	case s.MaxErrorRate < 0 || s.MaxErrorRate > 1:
		return inputf("the allowed share of failed transactions must be between 0 and 100%% (got %g%%)", 100*s.MaxErrorRate)
	}
	if s.Tick <= 0 {
		s.Tick = time.Second
	}
	if s.MaxErrorRate == 0 {
		s.MaxErrorRate = DefaultMaxErrorRate
	}
	names := map[string]bool{}
	for i := range s.Groups {
		g := &s.Groups[i]
		if len(s.Groups) > 1 && g.Name == "" {
			return inputf("client group %d needs a name", i+1)
		}
		if names[g.Name] {
			return inputf("two client groups are named %q", g.Name)
		}
		names[g.Name] = true
		if _, err := target.ParseQueryMode(g.QueryMode); err != nil {
			return inputf("%s", err)
		}
	}
	if len(s.Steps) == 0 {
		g := s.Groups[0]
		s.Steps = []Step{{Clients: g.Clients, Schedule: g.Schedule}}
	}
	if s.Failover != nil {
		return s.Failover.validate(s)
	}
	return nil
}

// controlConn is the control connection: a *pgx.Conn, or a *pgtext.Conn
// when every workload is PgConnOnly.
type controlConn interface {
	pgtext.Querier
	Close(ctx context.Context) error
}

// connect opens the control connection (to the server itself, not
// through a pooler). A run whose workloads are all PgConnOnly builds no
// pgx.Conn at all: its control connection is a *pgtext.Conn.
func (r *run) connect(ctx context.Context) error {
	cfg := r.tgt.Direct().Config
	if r.pgconnOnly() {
		conn, err := target.WaitReadyText(ctx, cfg, 0, nil)
		if err != nil {
			return err
		}
		r.conn = conn
		return nil
	}
	conn, err := target.WaitReady(ctx, cfg, 0, nil)
	if err != nil {
		return err
	}
	r.conn = conn
	return nil
}

// pgconnOnly: every group's workload is PgConnOnly.
func (r *run) pgconnOnly() bool {
	for _, g := range r.spec.Groups {
		if !g.Workload.Meta().PgConnOnly {
			return false
		}
	}
	return true
}

// prepareExisting checks that an existing database holds every group's
// workload and reads their parameters (scale, warehouses).
func (r *run) prepareExisting(ctx context.Context) error {
	for _, w := range r.workloads() {
		if err := RequireInitialised(ctx, r.conn, w); err != nil {
			return err
		}
	}
	if err := r.prepare(ctx); err != nil {
		return inputf("%s", oneLine(err.Error()))
	}
	return nil
}

// validateRun lets each workload refuse its client count.
func (r *run) validateRun() error {
	for i, g := range r.spec.Groups {
		clients := g.Clients
		if i == 0 {
			clients = r.spec.maxClients()
		}
		if v, ok := g.Workload.(workload.RunValidator); ok {
			if err := v.ValidateRun(clients); err != nil {
				return inputf("%s: %s", g.Workload.Meta().Name, err)
			}
		}
	}
	return nil
}

// workloads lists the groups' workloads, one per kind (two groups of tpcb
// share its tables: loaded, checked and named once).
func (r *run) workloads() []workload.Workload {
	var out []workload.Workload
	seen := map[string]bool{}
	for _, g := range r.spec.Groups {
		if name := g.Workload.Meta().Name; !seen[name] {
			seen[name] = true
			out = append(out, g.Workload)
		}
	}
	return out
}

// prepare gives a segment's workloads their segment (workload.Segmenter)
// and reads every group's parameters from the database (scale,
// warehouses).
func (r *run) prepare(ctx context.Context) error {
	for _, g := range r.spec.Groups {
		if sg, ok := g.Workload.(workload.Segmenter); ok && !r.spec.Segment.Whole() {
			sg.SetSegment(r.spec.Segment.Index, r.spec.Segment.Count)
		}
		if p, ok := g.Workload.(workload.Preparer); ok {
			if err := p.Prepare(ctx, r.conn); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Spec) maxClients() int {
	m := 0
	for _, st := range s.Steps {
		m = max(m, st.Clients)
	}
	return m
}

// totalClients is the most clients connected at once.
func (s *Spec) totalClients() int {
	n := s.maxClients()
	for _, g := range s.Groups[1:] {
		n += g.Clients
	}
	return n
}

// recordSpec completes the run spec.
func (r *run) recordSpec(p target.Provider) store.RunSpec {
	rs := r.spec.Record
	if rs.Created.IsZero() {
		rs.Created = time.Now()
	}
	g0 := r.spec.Groups[0]
	var names []string
	for _, w := range r.workloads() {
		names = append(names, w.Meta().Name)
	}
	rs.Workload = strings.Join(names, "+")
	rs.Params = Params(g0.Workload)
	rs.Seed = int64(r.spec.Seed)
	rs.Clients = r.spec.totalClients()
	rs.Threads = r.procs.Threads()
	rs.DurationS = r.spec.Duration.Seconds()
	rs.Transactions = r.spec.Transactions
	rs.QueryMode = g0.QueryMode
	rs.ConnectPerTx = g0.ConnectPerTx
	rs.MaxTries = max(g0.MaxTries, 1)
	rs.TickS = r.spec.Tick.Seconds()
	r.spec.recordSegment(&rs)
	rs.Embedded = target.CreatesTarget(p)
	if l := r.spec.TxLog; l != nil {
		rs.Load = maps.Clone(rs.Load)
		if rs.Load == nil {
			rs.Load = map[string]string{}
		}
		rs.Load["pgbench_logs"] = strings.Join(absPaths(l.Paths(r.spec.totalClients())), " ")
	}
	rs.Target = p.Describe()
	if r.tgt != nil {
		rs.Target = r.tgt.Description
	}
	if len(r.spec.Groups) > 1 {
		if rs.Load == nil {
			rs.Load = map[string]string{}
		}
		var gs []string
		for _, g := range r.spec.Groups {
			gs = append(gs, fmt.Sprintf("%s: %s, %d clients, %s", g.Name, g.Workload.Meta().Name, g.Clients, g.QueryMode))
		}
		rs.Load["groups"] = strings.Join(gs, "; ")
	}
	return rs
}

// fail records the run as failed (or stopped, when ctx was cancelled).
func (r *run) fail(ctx context.Context, err error) error {
	r.sum.Status, r.sum.StopReason, r.sum.End = metrics.StatusFailed, oneLine(err.Error()), time.Now()
	if ctx.Err() != nil {
		r.sum.Status, r.sum.StopReason = metrics.StatusStopped, "interrupted"
	}
	if ferr := r.writer.Finish(r.sum, &metrics.Accumulator{}); ferr != nil {
		r.notef("could not record the failed run: %v", ferr)
	}
	return err
}

// endOutputs gives the caller's outputs the end of a run that failed, as
// recorded by fail: after the run's own outputs are done when measuring had
// begun, else with the run's start first (it failed before measuring), so
// that a results database marks it failed with its error as the run's
// directory does.
func (r *run) endOutputs(outs []Output) {
	if r.fan == nil {
		if len(outs) == 0 {
			return
		}
		r.fan, r.fanned = &fanout{notef: r.notef}, true
		for _, o := range outs {
			r.fan.addOutput(o, false)
		}
		start := &RunStart{ID: r.writer.ID(), Spec: r.recorded}
		if r.described != nil {
			start.Server = *r.described
		}
		r.fan.publish(Record{Start: start})
	}
	r.fan.closeFirst(r.own)
	r.fan.publish(Record{End: &RunEnd{Summary: r.sum, Histograms: &metrics.Accumulator{}}})
	r.fan.close()
}

// Params records a workload's parameters (workload.Flagser); none for a
// workload without.
func Params(w workload.Workload) map[string]string {
	if fl, ok := w.(workload.Flagser); ok {
		return fl.Params()
	}
	return map[string]string{}
}

// RequireInitialised refuses a database without the workload's tables,
// naming what to do.
func RequireInitialised(ctx context.Context, conn pgtext.Querier, w workload.Workload) error {
	missing, err := loader.Missing(ctx, conn, w)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		name := w.Meta().Name
		return inputf("database is not initialised for %s (missing %s): run `pgarena init %s` first, or pass --init",
			name, strings.Join(missing, ", "), name)
	}
	return nil
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}
