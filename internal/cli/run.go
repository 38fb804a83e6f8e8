package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/sampler"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/workload"
)

type runFlags struct {
	target       targetFlags
	load         loadFlags
	jobs         int
	duration     time.Duration
	transactions int
	progress     time.Duration
	protocol     string
	connectPerTx bool
	maxTries     int
	label        string
	seed         uint64
	jsonOut      bool
	results      string
	tick         time.Duration
	init         bool
	loadWorkers  int
	check        bool
	cpuProfile   string
	netIO        string
	fixedProcs   bool
	sampleEvery  time.Duration
	dbHostLocal  bool
	serverLog    string

	// set by validate
	steps []step
	rules []driver.Rule
}

func (a *app) runCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run WORKLOAD",
		Short: "Benchmark a workload and record the run",
		Long: `Run a workload's transactions and record the run. The load model is a closed
loop of N clients (-c) by default: each starts its next transaction when the
previous one ends. -R or --schedule make it an open loop: transactions arrive
at a rate whether or not a client is free, wait for one, and their latency
counts from their scheduled arrival. -c 1,2,4,8 (or -R 100,200,400) runs a
sweep: one step per value, each with its own summary.

Progress is printed every -P seconds and a pgbench-style summary at the end.
Every run is recorded in the results directory (--results, PGARENA_RESULTS,
default ./pgarena-results): its spec first, each interval as it happens,
server and host samples, the summary and histograms at the end.

Without --dsn, --cluster, PGHOST or PGDATABASE an ephemeral PostgreSQL is
started from the installed server binaries, the workload is loaded into it,
benchmarked, and the cluster is removed (--keep-cluster keeps it).

Exit codes: 0 complete, 1 failed, 2 bad usage or input, 3 stopped by an
autostop rule, 130 interrupted.`,
		Example: `  pgarena run tpcb -s 10 -c 8 -j 2 -T 60s -P 5
  pgarena run tpcb -c 32 -T 5m -M prepared --dsn "$DSN" --label azure-8core
  pgarena run tpcb -S -c 8 -T 30s --dsn "$DSN" --json
  pgarena run tpcb -R 500 -c 64 -T 2m                      # open loop, Poisson arrivals at 500 tx/s
  pgarena run tpcb --schedule 'line(1,200,200s)' -c 256
  pgarena run tpcb --ramp 1m --warmup 2m -T 10m
  pgarena run tpcb --autostop 'errors>25/s for 10s' --autostop 'p95>500ms for 10s'
  pgarena run tpcb -c 1,2,4,8,16,32 -T 60s                 # sweep
  pgarena run tpcc -c 8 -T 60s                             # embedded cluster, 10 warehouses
  pgarena run tpcc -c 32 --ramp 1m -T 10m --dsn "$DSN"     # warehouses read from the database
  pgarena run tpcc --stored-procs -c 16 -T 5m --dsn "$DSN"
  pgarena run tpcc --keying-thinking -c 100 -T 30m --dsn "$DSN"   # 10 warehouses, paced terminals`,
	}
	f := &runFlags{}
	a.workloadCommands(cmd, "run", func(sub *cobra.Command) {
		fl := sub.Flags()
		f.target.add(sub, true)
		f.load.add(fl)
		fl.IntVarP(&f.jobs, "jobs", "j", 0, "worker threads (caps GOMAXPROCS; default: all cores); clamped to --clients")
		fl.VarP(seconds{&f.duration}, "time", "T", "run for this long (seconds or 30s, 5m, 1h; default 60s unless -t); per step in a sweep")
		fl.IntVarP(&f.transactions, "transactions", "t", 0, "transactions per client (instead of -T)")
		fl.VarP(seconds{&f.progress}, "progress", "P", "print a progress line every this many seconds (0: off)")
		fl.StringVarP(&f.protocol, "protocol", "M", "", "query protocol: simple, extended or prepared (default: simple; tpcc: prepared)")
		fl.BoolVarP(&f.connectPerTx, "connect", "C", false, "open a new connection for every transaction")
		fl.IntVar(&f.maxTries, "max-tries", 1, "tries per transaction on serialization failure or deadlock (retries are counted)")
		fl.StringVar(&f.label, "label", "", "label recorded with the run (for listing and comparing)")
		fl.Uint64Var(&f.seed, "seed", 1, "random seed of the clients' streams and of generated data (recorded; same seed, same run)")
		fl.BoolVar(&f.jsonOut, "json", false, "print the final summary as JSON on stdout")
		fl.StringVar(&f.results, "results", "", "results directory (default $PGARENA_RESULTS or ./pgarena-results)")
		fl.DurationVar(&f.tick, "interval", time.Second, "length of a recorded interval")
		fl.BoolVar(&f.init, "init", false, "initialise the workload before running (always on for the embedded cluster)")
		fl.IntVar(&f.loadWorkers, "load-workers", runtime.NumCPU(), "connections loading data in parallel when initialising")
		fl.BoolVar(&f.check, "check", false, "run the workload's consistency check after the run")
		fl.Var(seconds{&f.sampleEvery}, "sample-interval", "sample server and host statistics this often (0: off)")
		fl.StringVar(&f.serverLog, "server-log", "", "server log file to scan for ERROR/FATAL/PANIC during the run (automatic for the embedded cluster)")
		fl.BoolVar(&f.dbHostLocal, "db-host-local", false, "the database runs on this host: its disk and CPU samples describe the server (implied for the embedded cluster)")
		fl.StringVar(&f.cpuProfile, "cpu-profile", "", "write a Go CPU profile of pgarena itself to this file (for pgarena's developers)")
		_ = fl.MarkHidden("cpu-profile")
		fl.StringVar(&f.netIO, "net-io", string(netio.Default), "clients' socket I/O: raw (netpoller, raw system calls), std (Go's net.Conn) or blocking (for pgarena's developers)")
		_ = fl.MarkHidden("net-io")
		fl.BoolVar(&f.fixedProcs, "fixed-procs", false, "keep GOMAXPROCS at -j while clients run instead of adding Ps as they need CPU (for pgarena's developers)")
		_ = fl.MarkHidden("fixed-procs")
		f.progress = 10 * time.Second
		f.sampleEvery = time.Second
	}, func(cmd *cobra.Command, w workload.Workload) error {
		return a.runWorkload(cmd, w, f)
	})
	return cmd
}

func (f *runFlags) validate(cmd *cobra.Command) error {
	switch {
	case cmd.Flags().Changed("time") && cmd.Flags().Changed("transactions"):
		return usagef("give either -T/--time or -t/--transactions, not both")
	case f.transactions < 0:
		return usagef("transactions must be at least 1 (got %d)", f.transactions)
	case cmd.Flags().Changed("time") && f.duration <= 0:
		return usagef("time must be positive (got %s)", f.duration)
	case f.maxTries < 1:
		return usagef("--max-tries must be at least 1 (got %d)", f.maxTries)
	case f.jobs < 0:
		return usagef("jobs must be at least 1 (got %d)", f.jobs)
	case f.tick < 10*time.Millisecond:
		return usagef("--interval must be at least 10ms (got %s)", f.tick)
	case f.loadWorkers < 1:
		return usagef("--load-workers must be at least 1 (got %d)", f.loadWorkers)
	}
	if f.duration == 0 && f.transactions == 0 {
		f.duration = 60 * time.Second
	}
	if _, err := target.ParseQueryMode(f.protocol); err != nil {
		return usagef("-M: %s", err)
	}
	if _, err := netio.ParseMode(f.netIO); err != nil {
		return usagef("--net-io: %s", err)
	}
	var err error
	if f.steps, f.rules, err = f.load.plan(f.duration, f.transactions); err != nil {
		return err
	}
	for _, r := range f.rules {
		if r.IsSampled() && f.sampleEvery <= 0 {
			return usagef("autostop %q watches a sampled series: it needs --sample-interval above 0", r.Text)
		}
	}
	return nil
}

func (a *app) runWorkload(cmd *cobra.Command, w workload.Workload, f *runFlags) error {
	ctx := cmd.Context()
	if !cmd.Flags().Changed("protocol") {
		f.protocol = "simple"
		if d, ok := w.(workload.QueryModeDefaulter); ok {
			f.protocol = d.DefaultQueryMode()
		}
	}
	if err := f.validate(cmd); err != nil {
		return err
	}
	if s, ok := w.(workload.Seeder); ok {
		s.SetSeed(f.seed)
	}
	clients := maxClients(f.steps)
	threads := f.jobs
	if threads > clients {
		a.notef("-j %d is more than -c %d: using %d threads", threads, clients, clients)
		threads = clients
	}
	if threads > 0 {
		gmp := min(threads, runtime.NumCPU())
		if threads > gmp {
			a.notef("-j %d: clients run as goroutines on at most %d OS threads (the cores of this machine)", threads, gmp)
		}
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(gmp))
	} else {
		threads = runtime.GOMAXPROCS(0)
	}
	limit, err := raiseOpenFiles()
	if err == nil && uint64(clients)+fdsPerProcess > limit {
		return usagef("%d clients need about %d open files but the limit is %d: raise it (ulimit -n) or use fewer clients",
			clients, clients+fdsPerProcess, limit)
	}
	for _, st := range f.steps {
		if msg := rateWarning(st); msg != "" {
			a.notef("%s", msg)
		}
	}
	st, err := store.Open(a.resultsDir(f.results))
	if err != nil {
		return err
	}

	// Resolve the target before recording anything, so bad input changes
	// nothing.
	embedded := !a.explicitTarget(&f.target)
	var (
		cfg  *pgx.ConnConfig
		bin  local.Binaries
		conn *pgx.Conn
	)
	if embedded {
		if bin, err = local.FindBinaries(f.target.pgBin, a.Env); err != nil {
			if f.target.pgBin != "" {
				err = fmt.Errorf("%w, or install PostgreSQL (apt-get install postgresql) and leave out --pg-bin, or use --dsn to benchmark an existing server", err)
			}
			return err
		}
	} else {
		if cfg, err = a.parseTarget(&f.target); err != nil {
			return err
		}
		if conn, err = a.connect(ctx, cfg, &f.target); err != nil {
			return err
		}
		defer func() { conn.Close(context.Background()) }()
		if !f.init {
			if err := requireInitialised(ctx, conn, w); err != nil {
				return err
			}
			// Parameters read from the database (scale, warehouses) are
			// known now: check them against the load model before recording.
			if p, ok := w.(workload.Preparer); ok {
				if err := p.Prepare(ctx, conn); err != nil {
					return usagef("%s", oneLine(err.Error()))
				}
			}
		}
	}
	if v, ok := w.(workload.RunValidator); ok {
		if err := v.ValidateRun(clients); err != nil {
			return usagef("%s: %s", w.Meta().Name, err)
		}
	}

	spec := store.RunSpec{
		Created:        time.Now(),
		PgarenaVersion: Version,
		CommandLine:    redactArgs(a.args),
		Workload:       w.Meta().Name,
		Params:         workloadParams(cmd, w),
		Seed:           int64(f.seed),
		Label:          f.label,
		Clients:        clients,
		Threads:        threads,
		DurationS:      f.duration.Seconds(),
		Transactions:   f.transactions,
		QueryMode:      f.protocol,
		ConnectPerTx:   f.connectPerTx,
		MaxTries:       f.maxTries,
		TickS:          f.tick.Seconds(),
		Embedded:       embedded,
		Host:           store.CollectHostInfo(),
		Load:           f.load.describe(f.steps),
	}
	if cfg != nil {
		spec.Target = target.Redacted(cfg)
	} else {
		spec.Target = "embedded PostgreSQL " + bin.Version
	}
	run, err := st.Create(spec)
	if err != nil {
		return err
	}
	defer run.Close()
	fmt.Fprintf(a.Stderr, "run %s: %s, %s, results in %s\n", run.ID(), w.Meta().Name, f.steps[0], run.Dir())

	sum := metrics.Summary{
		RunID: run.ID(), Workload: w.Meta().Name, Label: f.label, QueryMode: f.protocol,
		Clients: clients, Threads: threads, Params: spec.Params, Start: time.Now(),
	}
	fail := func(err error) error {
		sum.Status, sum.StopReason, sum.End = metrics.StatusFailed, oneLine(err.Error()), time.Now()
		if ctx.Err() != nil {
			sum.Status, sum.StopReason = metrics.StatusStopped, "interrupted"
		}
		if ferr := run.Finish(sum, &metrics.Accumulator{}); ferr != nil {
			a.notef("could not record the failed run: %v", ferr)
		}
		if ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, msg: "interrupted: " + oneLine(err.Error())}
		}
		return err
	}

	var cluster *local.Cluster
	if embedded {
		// The server logs into its own directory, which its account can
		// always write (as root it runs as postgres, which may not reach the
		// results directory); the log is copied into the run at teardown.
		cluster, err = a.startEmbedded(ctx, &f.target, bin, clients+20, "")
		if err != nil {
			return fail(err)
		}
		defer a.teardown(cluster, f.target.keepCluster, run.Path("server.log"))
		if cfg, err = target.ParseDSN(cluster.DSN("postgres"), a.getenv); err != nil {
			return fail(err)
		}
		if conn, err = a.connect(ctx, cfg, &f.target); err != nil {
			return fail(err)
		}
		defer func() { conn.Close(context.Background()) }()
		f.init = true
		f.dbHostLocal = true
	}
	info, err := target.Describe(ctx, conn)
	if err != nil {
		return fail(err)
	}
	if err := run.SetServer(store.ServerInfo{Version: info.Version, VersionNum: info.VersionNum, Settings: info.Settings}); err != nil {
		return fail(err)
	}
	if f.init {
		if err := a.load(ctx, cfg, w, f.loadWorkers, false); err != nil {
			return fail(err)
		}
	}
	if p, ok := w.(workload.Preparer); ok {
		if err := p.Prepare(ctx, conn); err != nil {
			return fail(err)
		}
	}
	sum.Params = workloadParams(cmd, w)

	mode, _ := target.ParseQueryMode(f.protocol)
	runCfg := cfg.Copy()
	runCfg.DefaultQueryExecMode = mode
	netMode, _ := netio.ParseMode(f.netIO)
	netio.Apply(&runCfg.Config, netMode)
	dial := func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, runCfg) }

	// Samplers watch the server and the host on their own connection; the
	// latest value of every series is kept for autostop rules.
	var smp *sampler.Sampler
	latest := &latestSamples{m: map[string]float64{}}
	if f.sampleEvery > 0 {
		opts := sampler.Options{ConnConfig: cfg, Interval: f.sampleEvery, DBHostLocal: f.dbHostLocal,
			ServerLogPath: f.serverLog,
			Sink: func(b []store.Sample) {
				latest.update(b)
				if err := run.AppendSamples(b...); err != nil {
					a.notef("could not record samples: %v", err)
				}
			}}
		if cluster != nil {
			opts.DataDir, opts.ServerLogPath = cluster.DataDir(), cluster.LogPath()
		}
		if smp, err = sampler.Start(ctx, opts); err != nil {
			a.notef("server sampling is off: %v", err)
			smp = nil
		}
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return fail(err)
		}
		defer stop()
	}

	figs := newFigureWindow(w, conn, f)
	if err := figs.begin(ctx); err != nil {
		a.notef("%v", err)
	}
	res, err := a.runSteps(ctx, w, dial, f, run, &sum, latest.get, figs)
	if err == nil {
		sum.Figures = figs.end(ctx, a.notef)
	}
	var findings []store.Finding
	if smp != nil {
		findings = smp.Stop()
	}
	if err == nil && sum.Failed > 0 {
		findings = append([]store.Finding{{Severity: store.SeverityWarning, Kind: "errors",
			Message: fmt.Sprintf("%d transactions failed (%.2f%%): %s", sum.Failed,
				100*float64(sum.Failed)/float64(sum.Failed+sum.Transactions), errorClasses(sum.Errors))}}, findings...)
	}
	if len(findings) > 0 {
		if ferr := run.SetFindings(findings); ferr != nil {
			a.notef("could not record findings: %v", ferr)
		}
	}
	if err != nil {
		return fail(err)
	}
	if err := run.Finish(sum, res.acc); err != nil {
		a.notef("could not record the summary: %v", err)
	}

	out := a.Stdout
	if f.jsonOut {
		out = a.Stderr
	}
	report.SummaryText(out, &sum)
	printFindings(a.Stderr, findings)
	if f.jsonOut {
		if err := writeJSON(a.Stdout, sum); err != nil {
			return err
		}
	}
	if f.check && !res.stopped {
		if err := a.runCheck(ctx, conn, w); err != nil {
			return err
		}
	}
	switch {
	case res.autostopped:
		return &exitError{code: ExitAutostop, msg: "run stopped by autostop (" + sum.StopReason + "): results so far are recorded"}
	case res.stopped:
		return &exitError{code: ExitInterrupted, msg: "run stopped early (" + sum.StopReason + "): results so far are recorded"}
	case res.appendErr != nil:
		return &exitError{code: ExitFailed, msg: "the run finished but not every interval was recorded"}
	}
	return nil
}

// stepsResult is how the steps of a run went.
type stepsResult struct {
	acc         *metrics.Accumulator // every measured interval of every step
	stopped     bool
	autostopped bool
	appendErr   error
}

// runSteps runs the load model, one driver run per step (one step unless
// sweeping), recording every interval, and fills sum.
func (a *app) runSteps(ctx context.Context, w workload.Workload, dial target.Dialer, f *runFlags,
	run *store.Writer, sum *metrics.Summary, sampled driver.Sampled, figs *figureWindow) (stepsResult, error) {
	res := stepsResult{acc: &metrics.Accumulator{}}
	sweep := len(f.steps) > 1
	seq := 0
	var targetSum, targetSecs float64
	var connectSum time.Duration
	for i, st := range f.steps {
		if sweep {
			fmt.Fprintf(a.Stderr, "step %d/%d: %s\n", i+1, len(f.steps), st)
		}
		var stepAcc metrics.Accumulator
		prog := &progressPrinter{w: a.Stderr, every: f.progress}
		prog.figure, _ = w.(workload.ProgressFigurer)
		rec := metrics.NewRecorder(w.TxTypes(), time.Now())
		stepNo := 0
		if sweep {
			stepNo = i + 1
		}
		dcfg := driver.Config{
			Clients:      st.clients,
			Duration:     f.duration,
			Transactions: f.transactions,
			ConnectPerTx: f.connectPerTx,
			MaxTries:     f.maxTries,
			Tick:         f.tick,
			Seed:         f.seed + uint64(i),
			Notef:        a.notef,
			Schedule:     st.schedule,
			Arrival:      f.load.arrival,
			LatencyLimit: f.load.latencyLimit,
			Ramp:         f.load.ramp,
			Warmup:       f.load.warmup,
			Autostop:     f.rules,
			Sampled:      sampled,
			OnInterval: func(iv metrics.Interval) {
				iv.Seq += seq
				iv.Step = stepNo
				if err := run.AppendIntervals(iv); err != nil && res.appendErr == nil {
					res.appendErr = err
					a.notef("could not record interval %d: %v", iv.Seq, err)
				}
				res.acc.Add(iv)
				stepAcc.Add(iv)
				figs.interval(ctx, iv, f.load.warmup, f.tick)
				if !iv.Warmup {
					// Arrivals the schedule asked for in this interval.
					targetSum += iv.TargetRate * iv.Duration().Seconds()
				}
				prog.add(iv)
			},
		}
		if !st.schedule.Empty() {
			dcfg.Duration = 0
		}
		var procs *netio.Procs // nil: GOMAXPROCS stays as -j set it
		if !f.fixedProcs {
			procs = netio.AdaptProcs(runtime.GOMAXPROCS(0))
		}
		dr, err := driver.Run(ctx, w, dial, dcfg, rec)
		procs.Stop()
		if err != nil {
			return res, err
		}
		if !st.schedule.Empty() {
			// The target is the asked-for arrivals over the time the
			// schedule ran (measured part only), not over the drain after.
			active := min(dr.End.Sub(dr.Start), st.schedule.Duration()) - f.load.warmup
			targetSecs += max(active, 0).Seconds()
		}
		seq += int(dr.End.Sub(dr.Start)/f.tick) + 2
		if i == 0 {
			sum.Start = dr.Start
		}
		sum.End = dr.End
		connectSum += dr.InitialConnect
		sum.Reconnects += dr.Reconnects
		sum.Unstarted += dr.Unstarted
		if sweep {
			ss := stepAcc.Step(i+1, st.clients, st.rate)
			if dr.Stopped {
				ss.Status, ss.StopReason = metrics.StatusStopped, dr.StopReason
				if dr.Autostopped {
					ss.Status = metrics.StatusAutostopped
				}
			}
			sum.Steps = append(sum.Steps, ss)
		}
		if dr.Stopped {
			res.stopped, res.autostopped = true, dr.Autostopped
			sum.StopReason = dr.StopReason
			if sweep {
				sum.StopReason = fmt.Sprintf("step %d: %s", i+1, dr.StopReason)
			}
			break
		}
	}
	res.acc.Fill(sum)
	sum.InitialConnectMS = float64((connectSum / time.Duration(len(f.steps))).Microseconds()) / 1000
	if targetSecs > 0 && targetSum > 0 {
		sum.TargetRate = targetSum / targetSecs
	}
	sum.Status = metrics.StatusComplete
	switch {
	case res.autostopped:
		sum.Status = metrics.StatusAutostopped
	case res.stopped:
		sum.Status = metrics.StatusStopped
	}
	if res.appendErr != nil {
		sum.StopReason = strings.TrimPrefix(sum.StopReason+"; ", "; ") + "some intervals were not recorded: " + res.appendErr.Error()
	}
	return res, nil
}

// latestSamples keeps the last value of every sampled series.
type latestSamples struct {
	mu sync.Mutex
	m  map[string]float64
}

func (l *latestSamples) update(b []store.Sample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range b {
		for k, v := range s.Values {
			l.m[k] = v
		}
	}
}

func (l *latestSamples) get(name string) (float64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.m[name]
	return v, ok
}

// errorClasses renders failures by class: "deadlock 2, other 1".
func errorClasses(e metrics.ErrorCounts) string {
	var parts []string
	for c := 1; c < metrics.NumClasses; c++ {
		if e[c] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", metrics.ErrorClass(c), e[c]))
		}
	}
	return strings.Join(parts, ", ")
}

// printFindings lists the samplers' end-of-run findings worth a look.
func printFindings(w io.Writer, fs []store.Finding) {
	shown := 0
	for _, f := range fs {
		if f.Severity == "info" {
			continue
		}
		if shown == 0 {
			fmt.Fprintln(w, "findings:")
		}
		fmt.Fprintf(w, "  %s: %s\n", f.Severity, f.Message)
		shown++
	}
}

// requireInitialised refuses to run on a database without the workload's
// tables, naming what to do.
func requireInitialised(ctx context.Context, conn *pgx.Conn, w workload.Workload) error {
	missing, err := loader.Missing(ctx, conn, w)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		name := w.Meta().Name
		return usagef("database is not initialised for %s (missing %s): run `pgarena init %s` first, or pass --init",
			name, strings.Join(missing, ", "), name)
	}
	return nil
}

func (a *app) teardown(c *local.Cluster, keep bool, logCopy string) {
	if err := copyFile(c.LogPath(), logCopy); err != nil {
		a.notef("could not copy the server log into the run: %v", err)
	}
	if keep {
		a.notef("keeping the embedded cluster: %s (data in %s); stop it with pg_ctl -D %s stop", c.DSN("postgres"), c.DataDir(), c.DataDir())
		return
	}
	if err := c.Remove(); err != nil {
		a.notef("could not remove the embedded cluster in %s: %v", c.DataDir(), err)
	}
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

func (a *app) resultsDir(flag string) string {
	if flag != "" {
		return flag
	}
	return store.DefaultDir(a.getenv)
}

// workloadParams records the workload's parameters: what it reports, else
// the flags it was given.
func workloadParams(cmd *cobra.Command, w workload.Workload) map[string]string {
	if p, ok := w.(workload.Parameterizer); ok {
		return p.Params()
	}
	m := map[string]string{}
	if fl, ok := w.(workload.Flagser); ok {
		fl.Flags().VisitAll(func(f *pflag.Flag) { m[f.Name] = f.Value.String() })
	}
	return m
}

// redactArgs hides passwords in a command line.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, s := range args {
		out[i] = target.RedactDSN(s)
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// progressPrinter prints a progress line every `every` of run time,
// covering the intervals since the previous line.
type progressPrinter struct {
	w       io.Writer
	every   time.Duration
	figure  workload.ProgressFigurer // nil: none
	start   time.Time
	pending []metrics.Interval
	last    time.Duration
}

func (p *progressPrinter) add(iv metrics.Interval) {
	if p.every <= 0 {
		return
	}
	if p.start.IsZero() {
		p.start = iv.Start
	}
	p.pending = append(p.pending, iv)
	elapsed := iv.End.Sub(p.start)
	if elapsed-p.last >= p.every-time.Millisecond {
		var extra []string
		if p.figure != nil {
			committed := map[string]int64{}
			var span time.Duration
			for _, iv := range p.pending {
				span += iv.Duration()
				for _, t := range iv.Tx {
					committed[t.Name] += t.Count
				}
			}
			f := p.figure.ProgressFigure(committed, span)
			extra = append(extra, fmt.Sprintf("%s %.0f", f.Name, f.Value))
		}
		fmt.Fprintln(p.w, report.ProgressLine(elapsed, p.pending, extra...))
		p.pending = p.pending[:0]
		p.last = elapsed
	}
}

func startCPUProfile(path string) (func(), error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); fh.Close() }, nil
}
