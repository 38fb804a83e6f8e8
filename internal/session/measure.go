package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/sampler"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// measure runs the part after the target is reached: server description,
// load, samplers, the steps, figures, findings, summary and checks.
func (r *run) measure(ctx context.Context, load bool, outs []Output) (Result, error) {
	res := Result{RunID: r.writer.ID(), Dir: r.writer.Dir()}
	srv, err := r.describe(ctx, load)
	if err != nil {
		return res, err
	}
	// A full results disk ends the run (as interrupted): what is written
	// stays readable, and nothing more could be kept.
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	m := &measurement{rec: &storeOutput{w: r.writer, notef: r.notef, diskFull: func(err error) { stop(err) }},
		figs: newFigureWindow(r.spec, r.conn), fo: &failover{}}
	if r.spec.Failover == nil {
		m.fo = nil
	}
	// The outputs are fixed before anything publishes: the store first,
	// the run's own (the figures' window, the failover's), then the caller's.
	own := append([]Output{m.rec, m.figs}, m.fo.outputs()...)
	m.own = len(own)
	m.fan = newFanout(r.notef, append(own, outs...)...)
	r.fanned, r.fan, r.own = true, m.fan, m.own
	// A run that fails from here on closes the fan in endOutputs.
	m.fan.publish(Record{Start: &RunStart{ID: r.writer.ID(), Spec: r.recorded, Server: srv}})
	latest := newLatestSamples(r.spec.Autostop)
	if err := r.startWatchers(ctx, m, latest); err != nil {
		return res, err
	}
	m.fo.begin(runCtx, r.spec.Warmup, m.publishSamples)
	r.fo = m.fo
	// The first snapshot is taken when measuring starts (after connecting
	// and any --start-at wait), so the figures' window is the measured one.
	beginFigures := func() {
		if err := m.figs.begin(ctx); err != nil {
			r.notef("%v", err)
		}
	}
	sr, err := r.runSteps(runCtx, m.fan, latest.get, m.markStep, beginFigures)
	findings := r.afterSteps(ctx, m, sr, err)
	if err != nil {
		return res, err
	}
	r.record(&res, m, sr, r.findings(findings))
	res.Stopped, res.Autostopped = sr.stopped, sr.autostopped
	if r.spec.Check && !sr.stopped {
		for _, w := range r.workloads() {
			res.Checks = append(res.Checks, Check(ctx, r.conn, w))
		}
	}
	return res, nil
}

// measurement is what watches and records a run beside its clients.
type measurement struct {
	fan      *fanout
	own      int // the run's own outputs, the first of fan's
	rec      *storeOutput
	figs     *figureWindow
	fo       *failover // nil without --failover
	smp      *sampler.Sampler
	markStep func(time.Time)
	closeObs func() error
}

// publishSamples gives samples to the outputs.
func (m *measurement) publishSamples(b []store.Sample) { m.fan.publish(Record{Samples: b}) }

// describe records the server, loads the workloads when asked, prepares
// the run and records a Citus topology.
func (r *run) describe(ctx context.Context, load bool) (store.ServerInfo, error) {
	info, err := target.Describe(ctx, r.conn)
	if err != nil {
		return store.ServerInfo{}, err
	}
	srv := store.ServerInfo{Version: info.Version, VersionNum: info.VersionNum, Settings: info.Settings,
		Pooler: poolerInfo(r.tgt.Pooler)}
	if off, rtt, err := clockOffset(ctx, r.conn); err == nil {
		srv.ClockOffsetMS, srv.ClockRTTMS = &off, rtt
	}
	if err := r.writer.SetServer(srv); err != nil {
		return srv, err
	}
	r.described = &srv
	for _, w := range r.workloads() {
		if load {
			if err := r.load(ctx, w); err != nil {
				return srv, err
			}
		}
	}
	if err := r.prepare(ctx); err != nil {
		return srv, err
	}
	r.sum.Params = Params(r.spec.Groups[0].Workload)
	// Citus: the topology the run measures, after the load placed shards
	if c, err := DescribeCitus(ctx, r.conn, tableNames(r.workloads())); err != nil {
		r.notef("citus topology not recorded: %v", err)
	} else if c != nil {
		srv.Citus, r.citus = c, c
		r.sum.Topology = c.Lines()
		if err := r.writer.SetServer(srv); err != nil {
			return srv, err
		}
	}
	return srv, nil
}

// startWatchers starts the samplers, the replication watch, the failover
// and the transaction observers; on an error it stops those started.
func (r *run) startWatchers(ctx context.Context, m *measurement, latest *latestSamples) error {
	var err error
	m.smp = r.startSampler(ctx, m.fan, latest)
	if r.repl, err = r.startReplication(ctx, m.publishSamples); err != nil {
		if m.smp != nil {
			m.smp.Stop()
		}
		return err
	}
	if m.fo != nil {
		if m.fo.fo, err = r.newFailover(ctx, m.publishSamples); err != nil {
			r.repl.stop()
			if m.smp != nil {
				m.smp.Stop()
			}
			return err
		}
	}
	if m.smp != nil {
		m.markStep = m.smp.MarkStep
		r.markSteady = m.smp.MarkSteady
		r.alignSamples = m.smp.Align
	}
	if m.closeObs, err = r.startObservers(); err != nil {
		r.repl.stop()
		if m.smp != nil {
			m.smp.Stop()
		}
		return err
	}
	return nil
}

// afterSteps closes the logs, takes the last figures' snapshot, waits for
// the replicas, stops the samplers (returning their findings) and the
// run's own outputs, and completes the summary; err is the steps' error.
func (r *run) afterSteps(ctx context.Context, m *measurement, sr stepsResult, err error) []store.Finding {
	// The logs are complete once the clients have stopped (a normal end,
	// an interrupt or a failure alike).
	if cerr := m.closeObs(); cerr != nil {
		r.notef("%v", cerr)
	}
	if err == nil {
		m.figs.stop(ctx)
	}
	if r.repl != nil && err == nil && !sr.stopped { // a cut-short step has no catch-up
		r.sum.Replication = r.repl.run(&r.sum)
		if p := r.sum.Replication.Problem(); p != "" && (r.sum.Status == metrics.StatusComplete || r.sum.Status == metrics.StatusDegraded) {
			r.sum.Status = metrics.StatusDegraded
			r.sum.StopReason = strings.TrimPrefix(r.sum.StopReason+"; "+p, "; ")
		}
	}
	r.repl.stop()
	// The samplers stop before the outputs drain: their last samples are
	// recorded too.
	var findings []store.Finding
	if m.smp != nil {
		findings = m.smp.Stop()
	}
	m.fan.closeFirst(m.own) // the failover's output has every interval then
	r.sum.Failover = m.fo.result(ctx)
	if err == nil {
		r.sum.Figures = m.figs.end(r.notef, r.sum.Start, r.sum.End)
		r.explainSlowest(ctx)
	}
	return findings
}

// findings are the run's findings: the samplers' after the replicas',
// prepared statements lost behind a pooler, failures and cancellations.
func (r *run) findings(findings []store.Finding) []store.Finding {
	findings = append(replicationFindings(r.sum.Replication), findings...)
	if n := r.sum.Errors[pgerr.ClassPreparedStatements]; n > 0 {
		findings = append([]store.Finding{preparedFinding(n, r.tgt.Pooler)}, findings...)
	}
	if r.sum.Failed > 0 {
		findings = append([]store.Finding{{Severity: store.SeverityWarning, Kind: "errors",
			Message: fmt.Sprintf("%d transactions failed (%.2f%%): %s%s", r.sum.Failed,
				100*float64(r.sum.Failed)/float64(r.sum.Failed+r.sum.Transactions), r.sum.Errors.List(),
				lastFailure(r.sum.Tx))}}, findings...)
	}
	if d := r.sum.Drain; d != nil && d.Cancelled > 0 {
		findings = append([]store.Finding{{Severity: store.SeverityWarning, Kind: "cancelled",
			Message: fmt.Sprintf("%d transactions still running at the end of the measured time (up to %.3f s then) had to be cancelled %.1f s later: they count as failed for --max-error-rate%s",
				d.Cancelled, d.SoFarMaxMS/1000, d.DrainS, lastOf(d.ErrorExamples))}}, findings...)
	}
	if d := r.sum.Drain; d != nil && d.Failed > 0 {
		findings = append([]store.Finding{{Severity: store.SeverityWarning, Kind: "drain_errors",
			Message: fmt.Sprintf("%d transactions still running at the end of the measured time failed in the drain after it: %s%s",
				d.Failed, d.Errors.List(), lastOf(d.ErrorExamples))}}, findings...)
	}
	return findings
}

// record writes the findings and the summary, then gives the caller's
// outputs the outcome as recorded and lets them drain.
func (r *run) record(res *Result, m *measurement, sr stepsResult, findings []store.Finding) {
	if len(findings) > 0 {
		if ferr := r.writer.SetFindings(findings); ferr != nil && !(errors.Is(ferr, store.ErrDiskFull) && errors.Is(m.rec.failed(), store.ErrDiskFull)) {
			r.notef("could not record findings: %v", ferr)
		}
	}
	res.NotRecorded = m.rec.failed()
	diskFull := errors.Is(res.NotRecorded, store.ErrDiskFull)
	switch {
	case diskFull:
		// A failure, not a stop: the caller says why, once (Result.NotRecorded).
		r.sum.Status = metrics.StatusFailed
		r.sum.StopReason = "the results directory is full: the intervals after that are not recorded"
	case res.NotRecorded != nil:
		r.sum.StopReason = strings.TrimPrefix(r.sum.StopReason+"; ", "; ") + "some intervals were not recorded: " + res.NotRecorded.Error()
	}
	if err := r.writer.Finish(r.sum, sr.acc); err != nil && !(diskFull && errors.Is(err, store.ErrDiskFull)) {
		r.notef("could not record the summary: %v", err)
	}
	res.Summary, res.Findings = r.sum, findings
	// The caller's outputs get the outcome as recorded, then drain.
	m.fan.publish(Record{End: &RunEnd{Summary: r.sum, Findings: findings, Histograms: sr.acc}})
	m.fan.close()
	res.OutputProblems = m.fan.outputProblems()
}

// load initialises w on the target.
func (r *run) load(ctx context.Context, w workload.Workload) error {
	if r.spec.Hooks.Load != nil {
		return r.spec.Hooks.Load(ctx, r.tgt.Direct(), w)
	}
	dial := func(ctx context.Context) (*pgx.Conn, error) { return r.tgt.Direct().Connect(ctx, "pgarena-loader") }
	if _, err := loader.Init(ctx, dial, w, loader.Options{Workers: r.spec.LoadWorkers}); err != nil {
		return fmt.Errorf("init %s: %w", w.Meta().Name, err)
	}
	return nil
}

// dialer is the client dialer of group g: the target's configuration with
// the group's query mode and the run's socket I/O (with hold's waits); no
// pgx statement cache where the workload runs statements through pgconn
// only (workload.Meta.PgConnOnly).
func (r *run) dialer(g *Group, hold *netio.Hold) target.Dialer {
	tgt, configure := r.dialConfig(g, hold)
	return tgt.Dialer(configure)
}

// pgConnDialer is dialer's for the clients that connect with pgconn alone
// (driver.Group.DialPgConn), and their query protocol.
func (r *run) pgConnDialer(g *Group, hold *netio.Hold) (target.PgConnDialer, workload.Protocol) {
	tgt, configure := r.dialConfig(g, hold)
	mode, _ := target.ParseQueryMode(g.QueryMode)
	return tgt.PgConnDialer(configure), workload.ProtocolOf(mode)
}

// dialConfig is the target of group g's clients and how their
// configuration is made from its Config.
func (r *run) dialConfig(g *Group, hold *netio.Hold) (*target.Target, func(*pgx.ConnConfig)) {
	mode, _ := target.ParseQueryMode(g.QueryMode)
	pgconnOnly := g.Workload.Meta().PgConnOnly
	tgt := r.tgt
	for _, rep := range r.tgt.Replicas {
		if g.Replica != "" && rep.Kind == g.Replica {
			tgt = &target.Target{Config: rep.Config}
			break
		}
	}
	return tgt, func(c *pgx.ConnConfig) {
		c.DefaultQueryExecMode = mode
		for k, v := range g.Settings {
			c.RuntimeParams[k] = v
		}
		target.DropUnusedCaches(c)
		if pgconnOnly {
			c.StatementCacheCapacity = 0
		}
		netio.ApplyHold(&c.Config, r.spec.NetIO, hold)
	}
}

// startSampler starts the server and host samplers on their own
// connection; their samples go to the outputs and the latest value of each
// series is kept for autostop rules.
func (r *run) startSampler(ctx context.Context, fan *fanout, latest *latestSamples) *sampler.Sampler {
	if r.spec.SampleEvery <= 0 {
		return nil
	}
	cfg := r.tgt.Direct().Config.Copy()
	// Raw system calls on the sampler's socket too: a tick's round trip
	// then does not wake the runtime's sysmon thread (netio).
	netio.Apply(&cfg.Config, netio.Raw)
	opts := sampler.Options{ConnConfig: cfg, Pooler: samplerPooler(r.tgt), Interval: r.spec.SampleEvery, DBHostLocal: r.tgt.Local,
		DataDir: r.tgt.DataDir, ServerLogPath: r.tgt.ServerLog, CitusWorkers: citusWorkers(r.spec.CitusWorkers, r.citus, r.tgt.Direct().Config),
		Sink: func(b []store.Sample) {
			latest.update(b)
			fan.publish(Record{Samples: b})
		}}
	smp, err := sampler.Start(ctx, opts)
	if err != nil {
		r.notef("server sampling is off: %v", err)
		return nil
	}
	return smp
}

// latestSamples keeps the last value of each sampled series an autostop
// rule reads (none without such rules: a tick's samples are not copied).
type latestSamples struct {
	mu   sync.Mutex
	want []string // the series rules read
	m    map[string]float64
}

func newLatestSamples(rules []driver.Rule) *latestSamples {
	l := &latestSamples{m: map[string]float64{}}
	for _, r := range rules {
		if r.IsSampled() && !slices.Contains(l.want, r.Metric) {
			l.want = append(l.want, r.Metric)
		}
	}
	return l
}

func (l *latestSamples) update(b []store.Sample) {
	if len(l.want) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range b {
		for _, k := range l.want {
			if v, ok := s.Values[k]; ok {
				l.m[k] = v
			}
		}
	}
}

func (l *latestSamples) get(name string) (float64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.m[name]
	return v, ok
}

// copyFile copies src to dst (created or truncated).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// lastFailure is "; last: SQLSTATE: message" of the latest failure.
func lastFailure(txs []metrics.TxSummary) string {
	var all metrics.ErrorExamples
	for _, t := range txs {
		all.Merge(t.ErrorExamples)
	}
	return lastOf(all)
}

// lastOf is "; last: SQLSTATE: message" of the latest failure of exs.
func lastOf(exs metrics.ErrorExamples) string {
	var last pgerr.ErrorDetail
	for _, ex := range exs {
		if ex.Last.Time.After(last.Time) {
			last = ex.Last
		}
	}
	if last.Message == "" {
		return ""
	}
	if last.SQLState != "" {
		return "; last: " + last.SQLState + ": " + last.Message
	}
	return "; last: " + last.Message
}
