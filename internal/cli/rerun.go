package cli

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
)

const rerunLong = `Run a recorded run again with the configuration it was made with (spec.json's
"config"): the same workload and parameters, seed, load model, target and
flags. Run flags given here override the recorded ones (--label, --dsn, -T...).
The recorded configuration has no passwords: give the target again (--dsn), or
let PGPASSWORD or ~/.pgpass supply the password.`

func (a *app) rerunCommand() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{Use: "rerun RUN [run flags]", Short: "Run a recorded run again, with its configuration",
		Long: rerunLong, Args: cobra.ExactArgs(1),
		Example: "  pgarena rerun last --label again\n  pgarena rerun 20261122-0315 --dsn \"$DSN\" -T 5m",
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := a.resultsDir(f.Results)
			cfg, err := recordedConfig(store.OpenReadOnly(dir), args[0])
			if err != nil {
				return err
			}
			cfg, masked := cfg.Unmasked()
			if err := cfg.Override(cmd.Flags()); err != nil {
				return usagef("%s", err)
			}
			cfg.Results, cfg.SegmentIDFile = dir, ""
			err = a.runConfig(cmd.Context(), cfg)
			var ce *target.ConnectError
			if masked && errors.As(err, &ce) && ce.Class == pgerr.ClassAuth {
				return usagef("%s: the recorded run keeps no password: give --dsn again, or set PGPASSWORD or ~/.pgpass", oneLine(err.Error()))
			}
			return err
		}}
	f.AddFlags(cmd.Flags())
	return cmd
}

// recordedConfig is the configuration run id was made with (a merged
// run's: its segments' as --agents); a run recorded before configurations
// were kept has none (bad input: exit 2).
func recordedConfig(st store.Source, id string) (*runconfig.Config, error) {
	run, err := st.Load(id)
	if err != nil {
		return nil, usagef("%s", err)
	}
	if len(run.Spec.Config) == 0 {
		return nil, usagef("run %s was recorded by a pgarena that did not keep run configurations: repeat its command line instead: %s",
			run.Spec.ID, strings.Join(run.Spec.CommandLine, " "))
	}
	var cfg runconfig.Config
	if err := json.Unmarshal(run.Spec.Config, &cfg); err != nil {
		return nil, usagef("run %s: its recorded configuration cannot be read: %s", run.Spec.ID, err)
	}
	if n := len(run.Spec.MergedFrom); n > 0 {
		// A merged run keeps its first segment's configuration: the whole
		// run is that many segments run here as agents.
		cfg.Segment, cfg.StartAt, cfg.SegmentOf, cfg.SegmentIDFile, cfg.Agents = "", "", "", "", &n
		cfg.Label = run.Spec.Label
	}
	return &cfg, nil
}
