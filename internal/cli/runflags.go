package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// runFlags are a run's configuration (the run flags, bound to it) and what
// validate derives from it with the workload.
type runFlags struct {
	runconfig.Config
	configFile string // --config
	configYAML string // --config-yaml

	// set by validate
	protocol     string
	duration     time.Duration
	transactions int
	steps        []session.Step
	rules        []driver.Rule
	stdoutOut    bool           // an --out writes to stdout
	parsed       driver.Segment // --segment, once applySegment has parsed it
	notes        []string
}

// add attaches the run flags (internal/runconfig) and --config to sub.
func (f *runFlags) add(sub *cobra.Command) {
	f.AddFlags(sub.Flags())
	sub.Flags().StringVar(&f.configFile, "config", "", "read the run's configuration from this YAML file: any run flag's long name as a key, workload, args, params (as pgarena show RUN --config prints); flags given override it")
	sub.Flags().StringVar(&f.configYAML, "config-yaml", "", "the run's configuration itself, as --config's file holds it (pgarena k8s's pods)")
	_ = sub.Flags().MarkHidden("config-yaml")
}

// cmdConfig is the configuration of a run command: the flags bound to f,
// the workload's name, arguments and parameters given, and --config's keys
// for what the command line left out.
func cmdConfig(cmd *cobra.Command, w workload.Workload, f *runFlags) (*runconfig.Config, error) {
	cfg := f.Clone()
	cfg.Workload, cfg.Args = w.Meta().Name, cmd.Flags().Args()
	if fs, ok := w.(workload.Flagser); ok {
		cfg.Params = runconfig.Params(fs.Flags())
	}
	data := []byte(f.configYAML)
	if f.configFile != "" {
		var err error
		if data, err = os.ReadFile(f.configFile); err != nil {
			return nil, usagef("--config: %s", err)
		}
	}
	if len(data) == 0 {
		return cfg, nil
	}
	given := func(k string) bool {
		fl := cmd.Flags().Lookup(k)
		return fl != nil && fl.Changed || k == "workload" || k == "args" && len(cfg.Args) > 0
	}
	if err := cfg.ApplyFile(data, given); err != nil {
		return nil, usagef("--config %s: %s", f.configFile, joinLines(err))
	}
	return cfg, nil
}

// joinLines is a multi-error as one line.
func joinLines(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}

// prepare validates cfg and derives what the run needs from it and its
// workload (bad input: exit 2, every static error at once).
func prepare(cfg *runconfig.Config) (*runFlags, workload.Workload, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, usagef("%s", joinLines(err))
	}
	w, err := cfg.NewWorkload()
	if err != nil {
		return nil, nil, usagef("%s", err)
	}
	f := &runFlags{Config: *cfg.Clone()}
	return f, w, f.validate(w)
}

// validate derives the protocol, the length and the load plan with the
// workload's defaults.
func (f *runFlags) validate(w workload.Workload) error {
	f.protocol, f.duration, f.transactions = f.Protocol, runconfig.Val(f.Time), f.Transactions
	if f.protocol == "" {
		f.protocol = "simple"
		if d, ok := w.(workload.QueryModeDefaulter); ok {
			f.protocol = d.DefaultQueryMode()
		}
	}
	if _, err := target.ParseQueryMode(f.protocol); err != nil {
		return usagef("-M: %s", err)
	}
	if f.ProgressTimestamp && f.Progress == 10*time.Second {
		f.notes = append(f.notes, "--progress-timestamp: progress lines every 10 s (-P sets how often)")
	}
	var err error
	if f.stdoutOut, err = f.StdoutOut(); err != nil {
		return usagef("%s", err)
	}
	if err := f.operationCount(w); err != nil {
		return err
	}
	finisherLength(w, f)
	if f.duration == 0 && f.transactions == 0 {
		f.duration = 60 * time.Second
	}
	if f.steps, f.rules, err = f.LoadPlan(f.duration, f.transactions); err != nil {
		return usagef("%s", err)
	}
	return nil
}

// spec turns the validated configuration into a session spec.
func (a *app) spec(f *runFlags, w workload.Workload, threads int) session.Spec {
	netMode, _ := netio.ParseMode(f.NetIO)
	first := f.steps[0]
	spec := session.Spec{
		Record: store.RunSpec{
			PgarenaVersion: Version,
			CommandLine:    redactArgs(a.args),
			Label:          f.Label,
			Threads:        threads,
			Host:           store.CollectHostInfo(),
			Load:           f.DescribeLoad(f.steps),
			PlanTag:        a.plan.tag,
		},
		Groups: []session.Group{{Workload: w, Clients: first.Clients, Schedule: first.Schedule,
			Arrival: f.Arrival, LatencyLimit: f.LatencyLimit, QueryMode: f.protocol,
			ConnectPerTx: f.Connect, MaxTries: f.MaxTries}},
		Steps:        f.steps,
		Duration:     f.duration,
		Transactions: f.transactions,
		Tick:         f.Interval,
		Warmup:       f.Warmup,
		Ramp:         f.Ramp,
		Autostop:     f.rules,
		Seed:         f.Seed,
		Init:         f.Init,

		StatementLatencies: f.ReportPerCommand,
		LoadWorkers:        f.LoadWorkers,
		Check:              f.Check,

		MaxErrorRate:         f.MaxErrorRate / 100,
		ProceedWithConnected: f.ProceedWithConnected,
		SampleEvery:          f.SampleInterval,
		CatchUpTimeout:       f.CatchUpTimeout,
		Failover:             f.failoverSpec(),
		NetIO:                netMode,
		AdaptProcs:           !f.FixedProcs,
	}
	spec.Hooks = session.Hooks{
		Notef: a.notef,
		Created: func(id, dir string) {
			a.plan.runID = id
			fmt.Fprintf(a.Stderr, "run %s: %s, %s, results in %s\n", id, w.Meta().Name, f.share(f.steps[0]), dir)
		},
		Load: func(ctx context.Context, t *target.Target, w workload.Workload) error {
			return a.load(ctx, t.Config, w, f.LoadWorkers, false)
		},
	}
	applyPgbench(&spec, f, a.Stderr, a.notef)
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

// runFailed maps a session that could not run to its exit.
func (a *app) runFailed(ctx context.Context, err error, cfg *runconfig.Config) error {
	var refused *driver.InitialConnectError
	switch {
	case err != nil && ctx.Err() != nil:
		return &exitError{code: ExitInterrupted, msg: "interrupted: " + oneLine(err.Error())}
	case errors.As(err, &refused) && refused.Refused:
		return &exitError{code: ExitFailed, msg: oneLine(err.Error()) +
			": lower -c, raise the server's max_connections, or pass --proceed-with-connected to run with the clients that connected"}
	}
	return err
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
