package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/store"
)

// resultsHelp is the --results flag of the read commands.
const resultsHelp = "results directory, or a results database as a postgres:// URL (default $PGARENA_RESULTS or ./pgarena-results)"

func (a *app) listCommand() *cobra.Command {
	var results string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List recorded runs, newest first",
		Example: "  pgarena list\n  pgarena list --results /data/pgarena-results",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			src, done, err := a.source(results)
			if err != nil {
				return err
			}
			defer done()
			runs, err := src.List()
			if err != nil {
				return err
			}
			if len(runs) == 0 {
				fmt.Fprintf(a.Stderr, "no runs in %s yet (try `pgarena run tpcb`)\n", src.Where())
				return nil
			}
			rows := make([]report.RunRow, len(runs))
			for i, r := range runs {
				rows[i] = report.RunRow{ID: r.ID, Created: r.Created, Label: r.Label, Workload: r.Workload,
					Clients: r.Clients, TPS: r.TPS, P95MS: r.P95MS, Status: r.Status}
			}
			report.RunList(a.Stdout, rows, time.Local)
			return nil
		},
	}
	cmd.Flags().StringVar(&results, "results", "", resultsHelp)
	return cmd
}

func (a *app) showCommand() *cobra.Command {
	var (
		results string
		asJSON  bool
		config  bool
	)
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show a recorded run's summary",
		Long: `Show the summary of a run: a run id (or an unambiguous prefix), "last", or
"last~N" for the Nth run before the last. A run whose process died shows as
interrupted, summarised from the intervals it recorded.`,
		Example: "  pgarena show last\n  pgarena show last~1 --json\n  pgarena show 20261122-0315",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, done, err := a.source(results)
			if err != nil {
				return err
			}
			defer done()
			if config {
				return a.showConfig(src, args[0])
			}
			run, err := src.Load(args[0])
			if err != nil {
				return usagef("%s", err)
			}
			if asJSON {
				return writeJSON(a.Stdout, run.Summary)
			}
			fmt.Fprintf(a.Stdout, "target: %s\n", run.Spec.Target)
			if run.Server != nil {
				fmt.Fprintf(a.Stdout, "server: %s\n", run.Server.Version)
			}
			fmt.Fprintf(a.Stdout, "started: %s, %d intervals recorded\n", run.Spec.Created.Local().Format("2006-01-02 15:04:05"), len(run.Intervals))
			report.SummaryText(a.Stdout, &run.Summary)
			if l, ok := report.RunLoadLimits(run); ok {
				report.LoadLimitsText(a.Stdout, l)
			}
			if run.Truncated {
				fmt.Fprintln(a.Stdout, "note: the last interval line was torn (the process was killed while writing it) and is ignored")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&results, "results", "", resultsHelp)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	cmd.Flags().BoolVar(&config, "config", false, "print the configuration the run was made with (YAML, as run --config reads it; passwords masked)")
	return cmd
}

// showConfig prints the configuration run id was made with, as YAML.
func (a *app) showConfig(src store.Source, id string) error {
	cfg, err := recordedConfig(src, id)
	if err != nil {
		return err
	}
	y, err := cfg.EncodeYAML()
	if err == nil {
		_, err = a.Stdout.Write(y)
	}
	return err
}
