package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// runFlags are a run's configuration (the run flags, bound to it) and the
// run prepare builds from it (internal/runconfig).
type runFlags struct {
	runconfig.Config
	configFile string // --config
	configYAML string // --config-yaml

	run    *runconfig.Run // set by prepare
	parsed driver.Segment // --segment, once applySegment has parsed it
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

// prepare builds cfg's run (internal/runconfig): every static error at
// once, bad input (exit 2).
func prepare(cfg *runconfig.Config) (*runFlags, workload.Workload, error) {
	r, err := cfg.Clone().Build()
	if err != nil {
		return nil, nil, usagef("%s", joinLines(err))
	}
	return &runFlags{Config: *r.Config, run: r}, r.Workload, nil
}

// spec is the run's session spec with its record's provenance and hooks.
func (a *app) spec(f *runFlags, w workload.Workload) session.Spec {
	spec := f.run.Spec
	spec.Record.PgarenaVersion, spec.Record.CommandLine = Version, redactArgs(a.args)
	spec.Record.Host, spec.Record.PlanTag = store.CollectHostInfo(), a.plan.tag
	spec.Hooks = session.Hooks{
		Notef: a.notef,
		Created: func(id, dir string) {
			a.plan.runID = id
			fmt.Fprintf(a.Stderr, "run %s: %s, %s, results in %s\n", id, w.Meta().Name, f.share(f.run.Steps[0]), dir)
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
func (a *app) runFailed(ctx context.Context, err error) error {
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
