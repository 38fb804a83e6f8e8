package cli

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// runFlags are the flags of `run`.
type runFlags struct {
	target       targetFlags
	replica      replicaFlags
	pooler       poolerFlags
	seg          segmentFlags
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
	// statementLatencies: -r (scriptflags.go)
	statementLatencies bool
	results            string
	tick               time.Duration
	init               bool
	loadWorkers        int
	check              bool
	cpuProfile         string
	netIO              string
	fixedProcs         bool
	sampleEvery        time.Duration
	dbHostLocal        bool
	serverLog          string
	maxErrorRate       float64 // percent
	proceed            bool
	seedFrom           string   // "time" or "rand" when --random-seed drew the seed
	sessionSets        []string // --session-set (sessionset.go)
	workerDSNs         []string // --worker-dsn (sessionset.go)
	pgb                pgbenchRunFlags
	outs               []string // --out NAME[=ARG] (outputs.go)
	stdoutOut          bool     // an --out writes to stdout

	// set by validate
	steps []session.Step
	rules []driver.Rule
}

func (f *runFlags) add(sub *cobra.Command) {
	fl := sub.Flags()
	f.progress, f.sampleEvery = 10*time.Second, time.Second // before their flags: help shows them
	f.target.add(sub, true)
	f.pooler.add(fl)
	f.seg.add(fl)
	f.load.add(fl)
	f.replica.add(fl)
	fl.IntVarP(&f.jobs, "jobs", "j", 0, "worker threads (caps GOMAXPROCS; default: all cores); clamped to --clients")
	fl.VarP(seconds{&f.duration}, "time", "T", "run for this long (seconds or 30s, 5m, 1h; default 60s unless -t); per step in a sweep")
	fl.IntVarP(&f.transactions, "transactions", "t", 0, "transactions per client (instead of -T)")
	fl.VarP(seconds{&f.progress}, "progress", "P", "print a progress line every this many seconds (0: off)")
	fl.StringVarP(&f.protocol, "protocol", "M", "", "query protocol: simple, extended or prepared (default: simple; tpcc, ycsb: prepared)")
	fl.BoolVarP(&f.connectPerTx, "connect", "C", false, "open a new connection for every transaction")
	fl.IntVar(&f.maxTries, "max-tries", 1, "tries per transaction on serialization failure or deadlock (retries are counted)")
	fl.StringVar(&f.label, "label", "", "label recorded with the run (for listing and comparing)")
	addSessionSetFlag(fl, &f.sessionSets, &f.workerDSNs)
	seedFlag(fl, &f.seed, &f.seedFrom, "random seed of the clients' streams and of generated data (recorded; same seed, same run)")
	fl.BoolVar(&f.jsonOut, "json", false, "print the final summary as JSON on stdout")
	addOutFlag(fl, &f.outs)
	addScriptRunFlags(fl, f)
	fl.StringVar(&f.results, "results", "", "results directory (default $PGARENA_RESULTS or ./pgarena-results)")
	fl.DurationVar(&f.tick, "interval", time.Second, "length of a recorded interval")
	fl.BoolVar(&f.init, "init", false, "initialise the workload before running (always on for the embedded cluster)")
	fl.IntVar(&f.loadWorkers, "load-workers", runtime.NumCPU(), "connections loading data in parallel when initialising")
	fl.BoolVar(&f.check, "check", false, "run the workload's consistency check after the run")
	fl.Var(seconds{&f.sampleEvery}, "sample-interval", "sample server and host statistics this often (0: off)")
	fl.StringVar(&f.serverLog, "server-log", "", "server log file to scan for ERROR/FATAL/PANIC during the run (automatic for the embedded cluster)")
	fl.BoolVar(&f.dbHostLocal, "db-host-local", false, "the database runs on this host: its disk and CPU samples describe the server (implied for the embedded cluster)")
	fl.Float64Var(&f.maxErrorRate, "max-error-rate", 100*session.DefaultMaxErrorRate, "percent of failed transactions above which the run is degraded (status degraded, exit code 1)")
	fl.BoolVar(&f.proceed, "proceed-with-connected", false, "when the server refuses some clients' first connections (too many clients), run with those that connected instead of stopping with exit code 1")
	fl.StringVar(&f.cpuProfile, "cpu-profile", "", "write a Go CPU profile of pgarena itself to this file (for pgarena's developers)")
	_ = fl.MarkHidden("cpu-profile")
	fl.StringVar(&f.netIO, "net-io", string(netio.Default), "clients' socket I/O: raw (netpoller, raw system calls), std (Go's net.Conn) or blocking (for pgarena's developers)")
	_ = fl.MarkHidden("net-io")
	fl.BoolVar(&f.fixedProcs, "fixed-procs", false, "keep GOMAXPROCS at -j while clients run instead of adding Ps as they need CPU (for pgarena's developers)")
	_ = fl.MarkHidden("fixed-procs")
	f.pgb.add(fl)
}

func (f *runFlags) validate(cmd *cobra.Command, w workload.Workload) error {
	if !cmd.Flags().Changed("protocol") {
		f.protocol = "simple"
		if m := w.Meta().QueryMode; m != "" {
			f.protocol = m
		}
	}
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
	case f.maxErrorRate <= 0 || f.maxErrorRate > 100:
		return usagef("--max-error-rate is a percentage above 0, at most 100 (got %g)", f.maxErrorRate)
	case cmd.Flags().Changed("pool-size") && f.pooler.poolSize < 1:
		return usagef("--pool-size must be at least 1 (got %d)", f.pooler.poolSize)
	case cmd.Flags().Changed("agents") && f.seg.agents < 1:
		return usagef("--agents N: N must be at least 1 (got %d)", f.seg.agents)
	}
	if err := f.pgb.validate(cmd); err != nil {
		return err
	}
	stdout, err := checkOuts(f.outs, f.jsonOut, f.seg.agents)
	if err != nil {
		return err
	}
	f.stdoutOut = stdout
	if err := f.operationCount(cmd, w); err != nil {
		return err
	}
	finisherLength(w, f)
	if f.duration == 0 && f.transactions == 0 {
		f.duration = 60 * time.Second
	}
	if _, err := target.ParseQueryMode(f.protocol); err != nil {
		return usagef("-M: %s", err)
	}
	if _, err := netio.ParseMode(f.netIO); err != nil {
		return usagef("--net-io: %s", err)
	}
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

// spec turns the validated flags into a session spec.
func (a *app) spec(f *runFlags, w workload.Workload) session.Spec {
	netMode, _ := netio.ParseMode(f.netIO)
	first := f.steps[0]
	spec := session.Spec{
		Record: store.RunSpec{
			PgarenaVersion: Version,
			CommandLine:    redactArgs(a.args),
			Label:          f.label,
			Host:           store.CollectHostInfo(),
			Load:           f.load.describe(f.steps),
			PlanTag:        a.plan.tag,
		},
		Groups: []session.Group{{Workload: w, Clients: first.Clients, Schedule: first.Schedule,
			Arrival: f.load.arrival, LatencyLimit: f.load.latencyLimit, QueryMode: f.protocol,
			ConnectPerTx: f.connectPerTx, MaxTries: f.maxTries}},
		Steps:        f.steps,
		Duration:     f.duration,
		Transactions: f.transactions,
		Tick:         f.tick,
		Warmup:       f.load.warmup,
		Ramp:         f.load.ramp,
		Autostop:     f.rules,
		Seed:         f.seed,
		Init:         f.init,

		StatementLatencies: f.statementLatencies,
		LoadWorkers:        f.loadWorkers,
		Check:              f.check,

		MaxErrorRate:         f.maxErrorRate / 100,
		ProceedWithConnected: f.proceed,
		SampleEvery:          f.sampleEvery,
		CatchUpTimeout:       f.replica.catchUpTimeout,
		Failover:             f.replica.failoverSpec(),
		NetIO:                netMode,
		Jobs:                 f.jobs,
		AdaptProcs:           !f.fixedProcs,
	}
	spec.Hooks = session.Hooks{
		Notef: a.notef,
		Created: func(id, dir string) {
			a.plan.runID = id
			fmt.Fprintf(a.Stderr, "run %s: %s, %s, results in %s\n", id, w.Meta().Name, f.seg.share(f.steps[0]), dir)
		},
		Load: func(ctx context.Context, t *target.Target, w workload.Workload) error {
			return a.load(ctx, t.Config, w, f.loadWorkers, false)
		},
	}
	f.pgb.apply(&spec, f, a.Stderr, a.notef)
	return spec
}

// redactArgs hides passwords in a command line.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, s := range args {
		out[i] = target.RedactDSN(s)
	}
	return out
}
