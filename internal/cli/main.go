// Package cli is pgarena's command line: cobra commands built from the
// workload registry, flag parsing and validation, progress printing and exit
// codes. It is the only package that writes to the terminal.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/netio"
	outputs "github.com/pgarena/pgarena/internal/output/all"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/replica"
	"github.com/pgarena/pgarena/internal/workload"
	workloads "github.com/pgarena/pgarena/internal/workload/all"
)

// Version is pgarena's version, set at build time with
// -ldflags "-X github.com/pgarena/pgarena/internal/cli.Version=...".
var Version = "0.1.0-dev"

// Exit codes.
const (
	ExitOK          = 0
	ExitFailed      = 1 // the run (or command) failed
	ExitUsage       = 2 // bad usage or input: nothing was changed
	ExitAutostop    = 3 // an autostop rule ended the run; results are complete
	ExitInterrupted = 130
)

// Main runs pgarena with injected standard streams and environment, so
// command tests run in-process.
type Main struct {
	Stdout io.Writer
	Stderr io.Writer
	Env    []string // KEY=VALUE, as os.Environ
	// StartProcs is the GOMAXPROCS the process started with when its
	// start gave it one P (cmd/pgarena: internal/startprocs); 0: it did not.
	StartProcs int
}

// UsageError is bad input: printed as one line, exit code 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// exitError carries a specific exit code with an already printed message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Run executes the command line args and returns the exit code.
func (m Main) Run(ctx context.Context, args []string) int {
	procs := m.setupProcs(args)
	if procs > 0 {
		defer runtime.GOMAXPROCS(procs)
	}
	if m.Stdout == nil {
		m.Stdout = io.Discard
	}
	if m.Stderr == nil {
		m.Stderr = io.Discard
	}
	workloads.Register()
	outputs.Register()
	app := &app{Main: m, args: args, procs: procs}
	root := app.rootCommand()
	root.SetArgs(args)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return app.exitCode
	}
	var ee *exitError
	if ctx.Err() != nil && !errors.As(err, &ee) {
		// Interrupted (Ctrl-C, SIGTERM): whatever failed after it, 130.
		err = &exitError{code: ExitInterrupted, msg: "interrupted: " + oneLine(err.Error())}
	}
	return app.report(err)
}

// setupProcs gives a run's setup one P (netio.SetupProcs) and returns
// the GOMAXPROCS to set back after it: the process's own (0: none). Any
// other command gets the Ps the process started with back at once but
// --help and --version alone, which print on one.
func (m Main) setupProcs(args []string) int {
	if len(args) == 0 || args[0] != "run" {
		if a := (&app{Main: m, args: args}); m.StartProcs > 0 && !a.rootOnly() {
			if a.getenv("GOMAXPROCS") == "" {
				runtime.SetDefaultGOMAXPROCS() // and it follows CPU limits again
			} else {
				runtime.GOMAXPROCS(m.StartProcs)
			}
		}
		return 0
	}
	if m.StartProcs > 0 {
		return m.StartProcs // the binary's start gave it one P already
	}
	return netio.SetupProcs()
}

// report prints err as one line and maps it to an exit code.
func (a *app) report(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(a.Stderr, "pgarena: "+ee.msg)
		}
		return ee.code
	}
	msg := oneLine(err.Error())
	fmt.Fprintln(a.Stderr, "pgarena: "+msg)
	if isUsage(err) {
		return ExitUsage
	}
	return ExitFailed
}

// isUsage reports whether err is the user's to fix before anything runs.
func isUsage(err error) bool {
	var ue *UsageError
	var fe *loader.ForeignTablesError
	var ie *session.InputError
	switch {
	case errors.As(err, &ue), errors.As(err, &fe), errors.As(err, &ie), errors.As(err, new(*workload.InputError)),
		errors.As(err, new(*replica.InputError)),
		errors.Is(err, local.ErrNoCluster), errors.Is(err, local.ErrNotRunning),
		badConnectInput(err),
		errors.Is(err, local.ErrNoBinaries),
		errors.Is(err, store.ErrNotWritable):
		return true
	}
	return false
}

// badConnectInput reports whether err is a failure to connect that the
// user's input caused: credentials, a host name that does not resolve, a
// database that does not exist. A refused, lost or full server is not bad
// input (exit 1): the same command may work when the server is back.
func badConnectInput(err error) bool {
	var ce *target.ConnectError
	if !errors.As(err, &ce) {
		return false
	}
	switch ce.Class {
	case pgerr.ClassAuth, pgerr.ClassDNS:
		return true
	}
	var pe *pgconn.PgError
	return errors.As(ce.Err, &pe) && pe.Code == "3D000" // invalid_catalog_name
}

// oneLine joins a multi-line error message into one line.
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

// app holds one invocation's state.
type app struct {
	Main
	args     []string
	exitCode int
	plan     planHooks // set when a plan runs or checks a cell (plan.go)
	// procs is GOMAXPROCS before Main.Run gave a run's setup one P (0:
	// it did not)
	procs int
}

func (a *app) getenv(key string) string {
	prefix := key + "="
	for i := len(a.Env) - 1; i >= 0; i-- {
		if strings.HasPrefix(a.Env[i], prefix) {
			return a.Env[i][len(prefix):]
		}
	}
	return ""
}

func (a *app) notef(format string, args ...any) {
	fmt.Fprintf(a.Stderr, "note: "+format+"\n", args...)
}

// rootsBuilt counts the command trees built (a plan's cells build none).
var rootsBuilt atomic.Int64

func (a *app) rootCommand() *cobra.Command {
	rootsBuilt.Add(1)
	root := &cobra.Command{
		Use:   "pgarena",
		Short: "pgarena benchmarks PostgreSQL: load, drive, measure, keep and compare",
		Long: `pgarena benchmarks PostgreSQL deployments. It loads a benchmark schema fast,
drives it with many clients, records HDR latency histograms per interval,
keeps every run in a crash-safe results directory and prints pgbench-style
summaries.

Without --dsn (and without PGHOST/PGDATABASE in the environment) "run" starts
an ephemeral local PostgreSQL from the installed server binaries, loads the
workload, benchmarks it and removes the cluster.`,
		Example: `  pgarena run tpcb -s 10 -c 8 -j 2 -T 60s -P 5
  pgarena init tpcb -s 50 --dsn postgres://bench@db1/bench
  pgarena run tpcb -c 32 -T 5m -M prepared --dsn postgres://bench@db1/bench --label azure-8core
  pgarena list
  pgarena show last`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// --version, as the version command; not cobra's Version, whose
		// template cobra executes with text/template (issue 34).
		RunE: func(cmd *cobra.Command, _ []string) error {
			if v, _ := cmd.Flags().GetBool("version"); v {
				fmt.Fprintf(a.Stdout, "pgarena %s\n", Version)
				return nil
			}
			return cmd.Help()
		},
	}
	root.Flags().BoolP("version", "v", false, "version for pgarena")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%s (see %s --help)", err, c.CommandPath())
	})
	tops := a.topCommands()
	for _, c := range tops {
		if a.buildsCommand(tops, c.name) {
			root.AddCommand(c.build())
		}
	}
	root.CompletionOptions.DisableDefaultCmd = true
	usageArgs(root)
	return root
}

// topCommands are the root's subcommands, in help's order.
func (a *app) topCommands() []topCommand {
	return []topCommand{
		{"run", a.runCommand}, {"rerun", a.rerunCommand}, {"init", a.initCommand}, {"check", a.checkCommand},
		{"drop", a.dropCommand}, {"list", a.listCommand}, {"show", a.showCommand}, {"cluster", a.clusterCommand},
		{"version", a.versionCommand}, {"export", a.exportCommand}, {"compare", a.compareCommand},
		{"report", a.reportCommand}, {"plan", a.planCommand}, {"find-max", a.findMaxCommand},
		{"merge", a.mergeCommand}, {"serve", a.serveCommand}, {"publish", a.publishCommand}, {"k8s", a.k8sCommand},
	}
}

// usageArgs makes every wrong argument count and unknown command in the
// tree under c bad usage (exit 2), naming the command to look up.
func usageArgs(c *cobra.Command) {
	if !c.Runnable() && c.HasSubCommands() {
		// Runnable, so that cobra checks its arguments: without any it
		// prints its help, as before.
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	check := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		var err error
		switch {
		case check != nil:
			err = check(cmd, args)
		case cmd.HasSubCommands() && len(args) > 0: // cobra's default
			err = fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		if err != nil {
			return usagef("%s (see %s --help)", err, cmd.CommandPath())
		}
		return nil
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print pgarena's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(a.Stdout, "pgarena %s\n", Version)
			return nil
		},
	}
}

// workloadCommands adds one subcommand per registered workload to parent,
// each with the workload's own flags; run is called with the configured
// workload.
func (a *app) workloadCommands(parent *cobra.Command, verb string, addFlags func(*cobra.Command),
	run func(cmd *cobra.Command, w workload.Workload) error) {
	for _, meta := range workload.All() {
		if !a.buildsWorkload(parent, meta.Name) {
			continue
		}
		w := meta.New()
		use, long := workloadUse(meta, w)
		sub := &cobra.Command{
			Use:     use,
			Short:   meta.Description,
			Long:    long,
			Args:    cobra.ArbitraryArgs,
			Example: examplesFor(parent.Example, meta.Name),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := setWorkloadArgs(meta.Name, w, args); err != nil {
					return err
				}
				if err := w.Validate(); err != nil {
					return usagef("%s: %s", meta.Name, err)
				}
				return run(cmd, w)
			},
		}
		if f, ok := w.(workload.Flagser); ok {
			f.Flags().VisitAll(func(fl *pflag.Flag) {
				if workload.FlagApplies(fl, verb) {
					sub.Flags().AddFlag(fl)
				}
			})
		}
		addFlags(sub)
		parent.AddCommand(sub)
	}
	parent.Args = cobra.ArbitraryArgs
	// A workload's flags are unknown to the verb: "run nosuch --dsn X"
	// must say the workload is unknown, not the flag.
	parent.FParseErrWhitelist.UnknownFlags = true
	parent.RunE = func(cmd *cobra.Command, args []string) error {
		names := workloadNames()
		if len(args) == 0 {
			return usagef("%s needs a workload: %s (see pgarena %s --help)", verb, names, verb)
		}
		return usagef("unknown workload %q (available: %s)", args[0], names)
	}
}

func workloadNames() string {
	var n []string
	for _, m := range workload.All() {
		n = append(n, m.Name)
	}
	return strings.Join(n, ", ")
}

// stdinIsTerminal etc. are not needed; progress rendering checks Stderr.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// examplesFor keeps the example lines about workload name, or all of them
// when none is (the generic ones then show the syntax).
func examplesFor(examples, name string) string {
	var keep []string
	for _, l := range strings.Split(examples, "\n") {
		if strings.Contains(l, " "+name+" ") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return examples
	}
	return strings.Join(keep, "\n")
}
