package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/merge"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/store"
)

const mergeLong = `Merge the runs of a benchmark's segments (run --segment i/N on several
machines, pods or local agents, with the same --start-at) into one new run:
intervals aligned on the shared tick boundaries, counts and errors summed, HDR
histograms merged exactly, the summary recomputed from the merged intervals.
show, report and compare work on the merged run like on any run.

Only segments of one run merge: the same --segment-of (set by --agents and
pgarena k8s; by hand, the --start-at time), workload and parameters, clients,
seed, load model, duration and --start-at. A run that was not a segment, a
merged run, or segments of different runs are refused (exit code 2). A
missing segment, one that did not finish, or one that started measuring more
than 1s after --start-at makes the merged run partial (exit code 1), saying
which. Database figures (TPC-C NOPM, TPM) are taken once, from the first
segment, not summed, and checked against the summed client counts.

Collect the segments' run directories into one results directory first (copy
them: each is self-contained), then merge there.`

func (a *app) mergeCommand() *cobra.Command {
	var results, label string
	var expect int
	cmd := &cobra.Command{
		Use:     "merge RUN... --label LABEL",
		Short:   "Merge the runs of a run's segments into one run",
		Long:    mergeLong,
		Example: "  pgarena merge 20261201-095958-tpcc-0of2-k3f9 20261201-095958-tpcc-1of2-x7q2 --label tpcc-2x64",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("segments") && expect < 1 {
				return usagef("--segments must be at least 1 (got %d)", expect)
			}
			st, err := store.Open(a.resultsDir(results))
			if err != nil {
				return err
			}
			return a.mergeRuns(st, args, label, expect, false)
		},
	}
	cmd.Flags().StringVar(&results, "results", "", "results directory (default $PGARENA_RESULTS or ./pgarena-results)")
	cmd.Flags().StringVar(&label, "label", "", "label of the merged run")
	cmd.Flags().IntVar(&expect, "segments", 0, "how many segments the run had (default: from the runs' specs); segments not given are missing")
	return cmd
}

// mergeRuns merges refs, prints the merged run's summary (as JSON on
// stdout with jsonOut, the text then on stderr) and returns the exit
// status: partial is a failure (exit 1).
func (a *app) mergeRuns(st *store.Store, refs []string, label string, expect int, jsonOut bool) error {
	res, err := merge.Runs(st, refs, merge.Options{Label: label, CommandLine: redactArgs(a.args), Version: Version, Expect: expect})
	switch {
	case errors.Is(err, merge.ErrIncompatible), errors.Is(err, store.ErrNoRun), errors.Is(err, store.ErrAmbiguous):
		return usagef("%s", err)
	case err != nil:
		return err
	}
	fmt.Fprintf(a.Stderr, "merged run %s from %d runs, in %s\n", res.ID, len(refs), res.Dir)
	for _, n := range res.Notes {
		a.notef("%s", n)
	}
	if jsonOut {
		report.SummaryText(a.Stderr, &res.Summary)
		if err := writeJSON(a.Stdout, res.Summary); err != nil {
			return err
		}
	} else {
		report.SummaryText(a.Stdout, &res.Summary)
	}
	if res.Summary.Status == metrics.StatusPartial {
		return &exitError{code: ExitFailed, msg: "merged run is partial: " + res.Summary.StopReason}
	}
	return nil
}
