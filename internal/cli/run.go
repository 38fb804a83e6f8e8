package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/workload"
)

const runLong = `Run a workload's transactions and record the run. The load model is a closed
loop of N clients (-c) by default: each starts its next transaction when the
previous one ends. -R or --schedule make it an open loop: transactions arrive
at a rate whether or not a client is free, wait for one, and their latency
counts from their scheduled arrival. -c 1,2,4,8 (or -R 100,200,400) runs a
sweep: one step per value, each with its own summary.

The measured time is the one asked for (-T, -t, the schedule). Transactions
still running when it ends are counted as unfinished, with their time so far;
they get --drain-timeout (10 s; 0: none) to finish (the drain, never part of
the duration or tps), then are cancelled, and the cancelled count as failed
for --max-error-rate.

Progress is printed every -P seconds and a pgbench-style summary at the end.
Every run is recorded in the results directory (--results, PGARENA_RESULTS,
default ./pgarena-results): its spec first, each interval as it happens,
server and host samples, the summary and histograms at the end.

Without --dsn, --cluster, PGHOST or PGDATABASE an ephemeral PostgreSQL is
started from the installed server binaries, the workload is loaded into it,
benchmarked, and the cluster is removed (--keep-cluster keeps it).

Exit codes: 0 complete, 1 failed or degraded (more failures than --max-error-rate, a
replica that did not catch up or could not be read, or a full results disk), 2 bad usage or
input, 3 stopped by an autostop rule, 130 interrupted (at any time, the drain included).`

const runExamples = `  pgarena run tpcb -s 10 -c 8 -j 2 -T 60s -P 5
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
  pgarena run tpcc --keying-thinking -c 100 -T 30m --dsn "$DSN"   # 10 warehouses, paced terminals
  pgarena run ycsb --workload a -c 16 -T 60s                # embedded cluster, 100000 records
  pgarena run ycsb --workload e -c 8 -T 5m --dsn "$DSN"     # 95% scans, 5% inserts
  pgarena run ycsb --workload c --operation-count 1000000 -c 10 --request-distribution exponential --dsn "$DSN"
  pgarena run ycsb --workload b --request-distribution hotspot --hotspot-data-fraction 0.1 -c 32 --dsn "$DSN"
  pgarena run sysbench oltp_read_write -c 8 -T 60s --dsn "$DSN"    # tables and rows read from the database
  pgarena run sysbench oltp_point_select --tables 4 --table-size 100000 -c 8 -T 60s
  pgarena run script -f bench.sql@3 -f other.sql -D ids=1000 -c 8 -T 60s --dsn "$DSN"   # pgbench scripts on any database
  pgarena run script -f bench.sql -l --aggregate-interval 10 -r -c 4 -T 5m --dsn "$DSN"  # pgbench's logs, per-command latencies
  pgarena run tpcb -b tpcb-like@9 -b select-only -f extra.sql -r            # builtins mix with files
  pgarena run tpch --power --dsn "$DSN"                     # RF1, Q1..Q22, RF2: power@size
  pgarena run tpch --power --throughput --streams 2 --dsn "$DSN"
  pgarena run tpch --queries 1,6,14 --repeat 5 --dsn "$DSN"
  pgarena run chbench --oltp-clients 8 --olap-clients 2 -T 10m --dsn "$DSN"`

func (a *app) runCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "run WORKLOAD", Short: "Benchmark a workload and record the run",
		Long: runLong, Example: runExamples}
	f := &runFlags{}
	a.workloadCommands(cmd, "run", f.add, func(cmd *cobra.Command, w workload.Workload) error {
		cfg, err := cmdConfig(cmd, w, f)
		if err != nil {
			return err
		}
		return a.runConfig(cmd.Context(), cfg)
	})
	noWorkload := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error { // run --config FILE [flags]
		if a.args[0] != "run" || !runconfig.HasConfig(a.args[1:]) {
			return noWorkload(cmd, args)
		}
		cfg, err := runconfig.Parse(a.args[1:], os.ReadFile)
		if err != nil {
			return usagef("%s", joinLines(err))
		}
		return a.runConfig(cmd.Context(), cfg)
	}
	return cmd
}

// runConfig runs one benchmark from its configuration: the session spec,
// the session, then the summary, findings, checks and the exit code.
func (a *app) runConfig(ctx context.Context, cfg *runconfig.Config) error {
	f, w, err := prepare(cfg)
	if err != nil {
		return err
	}
	a.runProcs(f)
	if runconfig.Val(f.Agents) > 0 {
		return a.runAgents(ctx, f)
	}
	if s, ok := w.(workload.Seeder); ok {
		s.SetSeed(f.Seed)
	}
	scriptOutput(w, a.Stderr, f.Jobs)
	clients := f.run.Clients
	if err := checkOpenFiles(clients); err != nil {
		return err
	}
	for _, st := range f.run.Steps {
		if msg := rateWarning(st); msg != "" {
			a.notef("%s", msg)
		}
	}
	st, err := store.Open(a.resultsDir(f.Results))
	if err != nil {
		return err
	}
	p, err := a.runProvider(f, clients)
	if err == nil {
		p, err = a.viaPooler(p, f, clients)
	}
	if err != nil {
		return err
	}
	if f.CPUProfile != "" {
		stop, err := startCPUProfile(f.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	spec, err := a.runSpec(f, w)
	if err != nil {
		return err
	}
	if spec.Record.Config, err = cfg.Redacted().EncodeJSON(); err != nil {
		return err
	}
	outs, err := a.runOutputs(f.Out)
	if err != nil {
		return err
	}
	res, err := session.Run(ctx, spec, p, st, append([]session.Output{progressFor(f, newProgressOutput(a.Stderr, f.Progress, w))}, outs...)...)
	if err = a.runFailed(ctx, err); err != nil {
		return err
	}
	var limits func(io.Writer)
	if f.Schedule != "" && len(f.run.Rules) > 0 {
		limits = func(w io.Writer) { printLoadLimits(w, st, res.RunID) }
	}
	return interruptedAfter(ctx, a.printResult(res, f.JSON, f.run.StdoutOut, summaryExtra(f, res, limits)))
}

// runProcs raises GOMAXPROCS from the one P Main.Run gave the setup to
// the run's threads (what session.Run sets; for agents' coordinator, and
// without -j, the process's own value).
func (a *app) runProcs(f *runFlags) {
	if a.procs == 0 {
		return
	}
	threads := a.procs
	if t := session.RunThreads(f.run.Spec); t > 0 && runconfig.Val(f.Agents) == 0 {
		threads = t
	}
	runtime.GOMAXPROCS(threads)
}

// interruptedAfter makes a run interrupted after its measured time (in
// its checks, say) exit 130 like any other interrupt, with err's reason.
func interruptedAfter(ctx context.Context, err error) error {
	var ee *exitError
	if ctx.Err() == nil || (errors.As(err, &ee) && ee.code == ExitInterrupted) {
		return err
	}
	msg := "interrupted after the measured time: the run is recorded"
	if err != nil {
		msg += " (" + oneLine(err.Error()) + ")"
	}
	return &exitError{code: ExitInterrupted, msg: msg}
}

// printLoadLimits prints, for an open-loop schedule run with autostop
// rules, the rate reached and the highest rate held (from the stored run).
func printLoadLimits(w io.Writer, st *store.Store, id string) {
	if run, err := st.Load(id); err == nil {
		if l, ok := report.RunLoadLimits(run); ok {
			report.LoadLimitsText(w, l)
		}
	}
}

// printResult prints the summary, findings and checks, and maps how the
// run ended to an exit code.
func (a *app) printResult(res session.Result, jsonOut, stdoutTaken bool, extra func(io.Writer)) error {
	sum := res.Summary
	out := a.Stdout
	if jsonOut || stdoutTaken { // stdout keeps one JSON value, or an --out's stream
		out = a.Stderr
	}
	report.SummaryText(out, &sum)
	if extra != nil {
		extra(out)
	}
	printFindings(a.Stderr, res.Findings)
	printOutputProblems(a.Stderr, res.OutputProblems)
	if jsonOut {
		if err := writeJSON(a.Stdout, sum); err != nil {
			return err
		}
	}
	for _, c := range res.Checks {
		if err := a.printCheck(out, c); err != nil { // with --json: stderr, stdout keeps one JSON value
			return err
		}
	}
	switch {
	case errors.Is(res.NotRecorded, store.ErrDiskFull):
		return &exitError{code: ExitFailed, msg: oneLine(res.NotRecorded.Error()) + ": the run was ended; what was recorded before stays readable"}
	case res.Autostopped:
		return &exitError{code: ExitAutostop, msg: "run stopped by autostop (" + sum.StopReason + "): results so far are recorded"}
	case res.Stopped:
		return &exitError{code: ExitInterrupted, msg: "run stopped early (" + sum.StopReason + "): results so far are recorded"}
	case sum.Status == metrics.StatusDegraded:
		return &exitError{code: ExitFailed, msg: "run degraded: " + sum.StopReason + "; results are recorded"}
	case res.NotRecorded != nil:
		return &exitError{code: ExitFailed, msg: "the run finished but not every interval was recorded"}
	}
	return nil
}

// printFindings lists the samplers' end-of-run findings worth a look:
// warnings, and the pooler queue (it changes what the latency means).
func printFindings(w io.Writer, fs []store.Finding) {
	shown := 0
	for _, f := range fs {
		if f.Severity == "info" && f.Kind != "pooler_queue" {
			continue
		}
		if shown == 0 {
			fmt.Fprintln(w, "findings:")
		}
		fmt.Fprintf(w, "  %s: %s\n", f.Severity, f.Message)
		shown++
	}
}

func (a *app) resultsDir(flag string) string {
	if flag != "" {
		return flag
	}
	return store.DefaultDir(a.getenv)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
