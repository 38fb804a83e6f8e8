package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/plan"
	"github.com/pgarena/pgarena/internal/store"
)

const findMaxLong = `Search the highest open-loop rate (transactions per second) at which an SLO
holds for a confirmation window: latency percentiles (from the intended start,
queueing included) and an error rate. Each step is a recorded run of --window
at one rate (-R): rates go up by --factor from --start until the SLO breaks,
then bisect until the bracket is within --precision. It reports the
sustainable rate and the runs that bracket it.

Every other flag is a run flag (clients, target, protocol, workload
parameters): see pgarena run WORKLOAD --help. A step also fails the SLO when
it is cut short or when more than 1% of its arrivals never started.`

const findMaxExamples = `  pgarena find-max tpcb --slo 'p99<50ms' -c 64 --dsn "$DSN"
  pgarena find-max tpcb --slo 'p95<20ms,errors<0.1%' --start 500 --window 60s -c 32 --dsn "$DSN"`

// findMaxFlags are find-max's own flags; the rest go to each step's run.
type findMaxFlags struct {
	slo, results           string
	start, factor, maxRate float64
	precision              float64
	window                 time.Duration
	maxSteps               int
	jsonOut                bool
	runArgs                []string
}

func (a *app) findMaxCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "find-max WORKLOAD --slo SLO [run flags]",
		Short: "Find the highest open-loop rate that keeps an SLO", Long: findMaxLong, Example: findMaxExamples,
		DisableFlagParsing: true}
	// Its own flags are parsed by parseFindMax (the rest go to each run);
	// they are defined here for --help.
	d := newFindMaxFlags()
	fl := cmd.Flags()
	fl.StringVar(&d.slo, "slo", "", "the SLO each step must hold: latency percentiles and an error rate, e.g. 'p99<50ms,errors<0.1%' (required)")
	fl.Float64Var(&d.start, "start", d.start, "the first rate tried, tx/s")
	fl.Float64Var(&d.factor, "factor", d.factor, "the rate grows by this factor until the SLO breaks")
	fl.Float64Var(&d.maxRate, "max-rate", d.maxRate, "the highest rate tried (0: no limit)")
	fl.Float64Var(&d.precision, "precision", d.precision, "bisect until the bracket is within this fraction of the rate")
	fl.DurationVar(&d.window, "window", d.window, "each step's run length: the SLO must hold over it")
	fl.IntVar(&d.maxSteps, "max-steps", d.maxSteps, "stop after this many steps")
	fl.StringVar(&d.results, "results", "", "results directory (default $PGARENA_RESULTS or ./pgarena-results)")
	fl.BoolVar(&d.jsonOut, "json", false, "print the result as JSON on stdout")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		for _, s := range args {
			if s == "-h" || s == "--help" {
				return cmd.Help()
			}
		}
		f, err := parseFindMax(args)
		if err != nil {
			return err
		}
		return a.findMax(cmd.Context(), f)
	}
	return cmd
}

// newFindMaxFlags has find-max's defaults.
func newFindMaxFlags() *findMaxFlags {
	return &findMaxFlags{start: 100, factor: 2, precision: 0.05, window: 30 * time.Second, maxSteps: 24}
}

// parseFindMax takes find-max's flags out of args (--name=value or --name
// value); the workload and run flags are left in f.runArgs.
func parseFindMax(args []string) (*findMaxFlags, error) {
	f := newFindMaxFlags()
	own := map[string]func(string) error{
		"slo":       func(v string) error { f.slo = v; return nil },
		"results":   func(v string) error { f.results = v; return nil },
		"start":     floatFlag(&f.start, "--start"),
		"factor":    floatFlag(&f.factor, "--factor"),
		"max-rate":  floatFlag(&f.maxRate, "--max-rate"),
		"precision": floatFlag(&f.precision, "--precision"),
		"window": func(v string) (err error) {
			if f.window, err = time.ParseDuration(v); err != nil || f.window <= 0 {
				return usagef("--window %q: a duration such as 30s", v)
			}
			return nil
		},
		"max-steps": func(v string) (err error) {
			if f.maxSteps, err = strconv.Atoi(v); err != nil || f.maxSteps < 2 {
				return usagef("--max-steps %q: a whole number of at least 2", v)
			}
			return nil
		},
	}
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		set, ok := own[name]
		switch {
		case args[i] == "--json":
			f.jsonOut = true
			continue
		case !strings.HasPrefix(args[i], "--") || !ok:
			if isRateFlag(args[i]) {
				return nil, usagef("find-max chooses the rate itself: leave out %s", args[i])
			}
			f.runArgs = append(f.runArgs, args[i])
			continue
		case !hasVal && i+1 < len(args):
			i++
			val = args[i]
		case !hasVal:
			return nil, usagef("--%s needs a value", name)
		}
		if err := set(val); err != nil {
			return nil, err
		}
	}
	return f, f.check()
}

func (f *findMaxFlags) check() error {
	switch {
	case f.slo == "":
		return usagef("find-max needs --slo, e.g. --slo 'p99<50ms'")
	case len(f.runArgs) == 0 || strings.HasPrefix(f.runArgs[0], "-"):
		return usagef("find-max needs a workload first: pgarena find-max WORKLOAD --slo ... (%s)", workloadNames())
	case f.start <= 0:
		return usagef("--start must be above 0")
	case f.factor <= 1:
		return usagef("--factor must be above 1 (got %g)", f.factor)
	case f.precision <= 0 || f.precision >= 1:
		return usagef("--precision is a fraction above 0 and below 1 (got %g)", f.precision)
	case f.maxRate != 0 && f.maxRate < f.start:
		return usagef("--max-rate %g is below --start %g", f.maxRate, f.start)
	}
	return nil
}

func isRateFlag(s string) bool {
	for _, p := range []string{"-R", "--rate", "--schedule"} {
		if s == p || strings.HasPrefix(s, p+"=") || p == "-R" && strings.HasPrefix(s, "-R") {
			return true
		}
	}
	return false
}

func floatFlag(dst *float64, name string) func(string) error {
	return func(v string) (err error) {
		if *dst, err = strconv.ParseFloat(v, 64); err != nil {
			return usagef("%s %q: a number", name, v)
		}
		return nil
	}
}

// findMax runs the search: each step a recorded run tagged find-max.
func (a *app) findMax(ctx context.Context, f *findMaxFlags) error {
	slo, err := plan.ParseSLO(f.slo)
	if err != nil {
		return usagef("--slo: %s", err)
	}
	ex := &planExec{a: a, results: f.results, out: a.Stderr}
	stepArgs := func(rate float64) []string {
		return append(append([]string(nil), f.runArgs...), "--rate="+plan.FormatRate(rate), "--time="+f.window.String())
	}
	if _, err := ex.Check(stepArgs(f.start)); err != nil {
		return usagef("%s", err)
	}
	st, err := store.Open(a.resultsDir(f.results))
	if err != nil {
		return err
	}
	name := "find-max " + time.Now().UTC().Format("20060102-150405")
	s := &plan.Search{SLO: slo, Start: f.start, Factor: f.factor, Max: f.maxRate, Min: 1, Precision: f.precision,
		MaxSteps: f.maxSteps, Store: st, Notef: a.planNotef,
		Step: func(ctx context.Context, rate float64) (string, error) {
			tag := store.PlanTag{Plan: name, CellName: "rate=" + plan.FormatRate(rate)}
			return ex.Run(ctx, stepArgs(rate), tag)
		}}
	res, err := s.Run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, msg: "find-max interrupted: " + oneLine(err.Error())}
		}
		return err
	}
	if f.jsonOut {
		return writeJSON(a.Stdout, res)
	}
	printFindMax(a.Stdout, slo, res)
	if res.Rate == 0 {
		return &exitError{code: ExitFailed, msg: "no rate tried kept the SLO"}
	}
	return nil
}

func printFindMax(w io.Writer, slo plan.SLO, res plan.SearchResult) {
	fmt.Fprintf(w, "find-max, SLO %s:\n", slo.Text)
	for _, p := range res.Probes {
		verdict := "held"
		if !p.Held {
			verdict = "broken: " + p.Why
		}
		fmt.Fprintf(w, "  %10s tx/s  %9.1f tps  %s  %s\n", plan.FormatRate(p.Rate), p.TPS, p.RunID, verdict)
	}
	switch {
	case res.Rate == 0:
		fmt.Fprintln(w, "no rate tried kept the SLO")
	case res.Capped:
		fmt.Fprintf(w, "sustainable rate: at least %s tx/s (run %s): --max-rate held\n", plan.FormatRate(res.Rate), res.Below.RunID)
	default:
		fmt.Fprintf(w, "sustainable rate: %s tx/s (run %s); breaks at %s tx/s (run %s)\n",
			plan.FormatRate(res.Rate), res.Below.RunID, plan.FormatRate(res.Above.Rate), res.Above.RunID)
	}
}
