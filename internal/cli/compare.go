package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/store"
)

const compareLong = `Compare runs: throughput, latency percentiles and errors side by side, the
relative difference from the first run (the baseline), and a verdict on one
metric: faster, slower, or within noise. The noise band is a 95% confidence
interval from the t-distribution: over repeats when runs are grouped
(--group-by label), else over 10 batch means of each run's intervals.

Runs of different workloads, scales or load models (closed or open loop,
rate, schedule, autostop rules), or a sweep beside a run that is not one,
are refused (exit 2) unless --force. Two sweeps are compared step by step,
steps matched by clients and rate. Different client hosts, server versions,
settings, run lengths, workload parameters or measured durations of runs
cut short are warned about.

`

func (a *app) compareCommand() *cobra.Command {
	var (
		sel      runSelection
		groupBy  string
		metric   string
		baseline string
		force    bool
	)
	keys := make([]string, len(report.Metrics))
	for i, m := range report.Metrics {
		keys[i] = m.Key
	}
	cmd := &cobra.Command{
		Use:     "compare RUN_A RUN_B [RUN...]",
		Short:   "Compare runs (or groups of repeats) side by side with deltas and a verdict",
		Long:    compareLong + selectionHelp,
		Example: "  pgarena compare last~1 last\n  pgarena compare --group-by label --metric p95 'label~pool-*'",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, ok := report.MetricByKey(metric)
			if !ok {
				return usagef("--metric %q: want one of %s", metric, strings.Join(keys, ", "))
			}
			if groupBy != "" && groupBy != "label" && groupBy != "run" {
				return usagef("--group-by %q: want label or run", groupBy)
			}
			defer sel.close()
			runs, err := sel.load(a, args, nil)
			if err != nil {
				return err
			}
			groups := groupRuns(runs, groupBy)
			if err := pickBaseline(groups, baseline); err != nil {
				return err
			}
			if len(groups) < 2 {
				return usagef("compare needs at least two runs or groups, got %d (%d runs)", len(groups), len(runs))
			}
			if m.Figure != "" && !report.HasFigure(groups, m.Figure) {
				return usagef("--metric %s: not every run has this figure (tpcc runs do); choose another --metric", m.Key)
			}
			refuse, warnings := report.Comparability(runs)
			if refuse != "" && !force {
				return usagef("%s", refuse)
			}
			if refuse != "" {
				fmt.Fprintln(a.Stderr, "warning: "+strings.TrimSuffix(refuse, " (use --force to compare anyway)")+" (--force)")
			}
			for _, w := range warnings {
				fmt.Fprintln(a.Stderr, "warning: "+w)
			}
			report.CompareText(a.Stdout, groups, m)
			return nil
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().StringVar(&groupBy, "group-by", "run", "label: treat runs with the same label as repeats of one setup; run: every run on its own")
	cmd.Flags().StringVar(&metric, "metric", "tps", "metric of the verdict: "+strings.Join(keys, ", "))
	cmd.Flags().StringVar(&baseline, "baseline", "", "the run id or label (with --group-by label) to compare against (default: the first)")
	cmd.Flags().BoolVar(&force, "force", false, "compare runs of different workloads, scales or load models")
	return cmd
}

// groupRuns makes one group per run, or with by "label" one per label in the
// order labels first appear.
func groupRuns(runs []*store.Run, by string) []*report.Group {
	var groups []*report.Group
	index := map[string]*report.Group{}
	for _, r := range runs {
		name := runName(r)
		if by == "label" {
			name = r.Spec.Label
			if name == "" {
				name = "(no label)"
			}
			if g := index[name]; g != nil {
				g.Runs = append(g.Runs, r)
				continue
			}
		}
		g := &report.Group{Name: name, Runs: []*store.Run{r}}
		index[name] = g
		groups = append(groups, g)
	}
	return groups
}

// runName names a single run in a comparison: its id, with its label.
func runName(r *store.Run) string {
	if r.Spec.Label != "" {
		return r.ID + " [" + r.Spec.Label + "]"
	}
	return r.ID
}

// pickBaseline moves the group or run named baseline to the front.
func pickBaseline(groups []*report.Group, baseline string) error {
	if baseline == "" {
		return nil
	}
	for j, g := range groups {
		if g.Name == baseline || len(g.Runs) == 1 && g.Runs[0].ID == baseline {
			groups[0], groups[j] = groups[j], groups[0]
			return nil
		}
	}
	return usagef("--baseline %q is not one of the compared runs or groups", baseline)
}
