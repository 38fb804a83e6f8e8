package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/plan"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/store"
)

const planLong = `A plan is a YAML file that names targets (DSNs, named clusters, the embedded
cluster with server settings), workloads with parameters, and matrix axes (any
run flag: clients, rate, schedule, protocol, target, workload parameters). It
expands into cells, one run each per repeat. Every run is recorded in the
results directory tagged with the plan and the cell, and the plan's state is
read back from there: after a kill -9, a reboot or a lost SSH session,
"plan run" again skips the cells done, reruns the one interrupted, and retries
failed cells only with --retry-failed. A failed cell is recorded and the plan
goes on. See examples/*.yaml.`

const planExamples = `  pgarena plan validate poolers.yaml
  pgarena plan run poolers.yaml
  pgarena plan status poolers.yaml
  pgarena plan report poolers.yaml -o poolers.html
  pgarena plan export poolers.yaml --format csv > results.csv`

func (a *app) planCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "plan", Short: "Run a campaign: a matrix of benchmarks from a YAML plan, resumable",
		Long: planLong, Example: planExamples}
	cmd.AddCommand(a.planValidateCommand(), a.planRunCommand(), a.planStatusCommand(),
		a.planReportCommand(), a.planExportCommand())
	return cmd
}

// loadPlan reads the plan file and checks every cell's run flags; a bad
// plan is bad input naming file:line.
func (a *app) loadPlan(path, results string) (*plan.Plan, *planExec, error) {
	p, err := plan.Load(path)
	if err != nil {
		var pe *plan.Error
		if errors.As(err, &pe) || errors.Is(err, os.ErrNotExist) {
			return nil, nil, usagef("%s", err)
		}
		return nil, nil, err
	}
	ex := &planExec{a: a, results: results, out: a.Stderr}
	if _, err := plan.Validate(p, ex, a.getenv); err != nil {
		return nil, nil, usagef("%s", err)
	}
	return p, ex, nil
}

func (a *app) planValidateCommand() *cobra.Command {
	return &cobra.Command{Use: "validate FILE", Short: "Check a plan without running it: every cell's flags",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, _, err := a.loadPlan(args[0], "")
			if err != nil {
				return err
			}
			cells := p.Cells()
			fmt.Fprintf(a.Stdout, "plan %s: %d cells x %d repeats = %d runs, %s\n",
				p.Name, len(cells)/p.Repeats, p.Repeats, len(cells), p.Order)
			for _, c := range cells {
				if c.Repeat == 1 {
					fmt.Fprintf(a.Stdout, "  %s  %s\n", c.ID, c.Name)
				}
			}
			return nil
		}}
}

func (a *app) planRunCommand() *cobra.Command {
	var results string
	var retry bool
	cmd := &cobra.Command{Use: "run FILE", Short: "Run the plan's cells not done yet",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, ex, err := a.loadPlan(args[0], results)
			if err != nil {
				return err
			}
			st, err := store.Open(a.resultsDir(results))
			if err != nil {
				return err
			}
			r := &plan.Runner{Plan: p, Store: st, Exec: ex, Getenv: a.getenv, Env: a.Env,
				HookOutput: a.Stderr, Notef: a.planNotef, RetryFailed: retry}
			out, err := r.Run(cmd.Context())
			switch {
			case err != nil && cmd.Context().Err() != nil:
				return &exitError{code: ExitInterrupted, msg: oneLine(err.Error())}
			case errors.Is(err, plan.ErrBusy):
				return usagef("%s", err)
			case err != nil:
				return err
			}
			return a.planOutcome(p, st, out)
		}}
	cmd.Flags().StringVar(&results, "results", "", "results directory (default $PGARENA_RESULTS or ./pgarena-results)")
	cmd.Flags().BoolVar(&retry, "retry-failed", false, "run failed cells again")
	return cmd
}

func (a *app) planNotef(format string, args ...any) {
	fmt.Fprintf(a.Stderr, "plan: "+format+"\n", args...)
}

// planOutcome prints the plan's state after a run; failed cells make exit
// code 1.
func (a *app) planOutcome(p *plan.Plan, st *store.Store, out plan.Outcome) error {
	s, err := plan.State(p, st)
	if err != nil {
		return err
	}
	c := s.Counts()
	fmt.Fprintf(a.Stdout, "plan %s: ran %d cells (%d with errors), skipped %d; %d/%d done, %d failed, %d pending\n",
		p.Name, out.Ran, out.Failed, out.Skipped, c[plan.Done], len(s.Cells), c[plan.Failed], c[plan.Pending])
	if c[plan.Failed] > 0 {
		return &exitError{code: ExitFailed, msg: fmt.Sprintf("%d cells failed (see pgarena plan status %s; --retry-failed runs them again)",
			c[plan.Failed], p.Path)}
	}
	return nil
}

func (a *app) planStatusCommand() *cobra.Command {
	var results string
	var asJSON bool
	cmd := &cobra.Command{Use: "status FILE", Short: "Cells done, running, failed and pending, with an ETA",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := plan.Load(args[0])
			if err != nil {
				return usagef("%s", err)
			}
			src, done, err := a.source(results)
			if err != nil {
				return err
			}
			defer done()
			s, err := plan.State(p, src)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.Stdout, planStatusJSON(s))
			}
			printPlanStatus(a.Stdout, s)
			return nil
		}}
	cmd.Flags().StringVar(&results, "results", "", resultsHelp)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the state as JSON")
	return cmd
}

func printPlanStatus(w io.Writer, s *plan.Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tstate\tcell\trepeat\trun\ttps\tnote")
	for _, cs := range s.Cells {
		run, tps, note := "-", "-", ""
		if cs.Run != nil {
			run = cs.Run.ID
			if cs.State == plan.Done {
				tps = fmt.Sprintf("%.1f", cs.Run.TPS)
			}
			if cs.Run.Status != "complete" {
				note = cs.Run.Status
			}
		}
		if cs.Attempts > 1 {
			note = strings.TrimSpace(fmt.Sprintf("%s %d attempts", note, cs.Attempts))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", cs.Index, cs.State, cs.Name, cs.Repeat, run, tps, note)
	}
	tw.Flush()
	c := s.Counts()
	fmt.Fprintf(w, "plan %s: %d/%d done, %d running, %d failed, %d pending", s.Plan.Name, c[plan.Done], len(s.Cells),
		c[plan.Running], c[plan.Failed], c[plan.Pending])
	if eta, ok := s.ETA(); ok && c[plan.Done] < len(s.Cells) {
		fmt.Fprintf(w, ", ETA %s", eta.Round(time.Second))
	}
	fmt.Fprintln(w)
	if s.Foreign > 0 {
		fmt.Fprintf(w, "(%d runs tagged %s belong to cells no longer in the file)\n", s.Foreign, s.Plan.Name)
	}
}

type planCellJSON struct {
	Index  int    `json:"index"`
	State  string `json:"state"`
	Cell   string `json:"cell"`
	Name   string `json:"name"`
	Repeat int    `json:"repeat"`
	RunID  string `json:"run_id,omitempty"`
}

func planStatusJSON(s *plan.Status) map[string]any {
	var cells []planCellJSON
	for _, cs := range s.Cells {
		c := planCellJSON{Index: cs.Index, State: cs.State, Cell: cs.ID, Name: cs.Name, Repeat: cs.Repeat}
		if cs.Run != nil {
			c.RunID = cs.Run.ID
		}
		cells = append(cells, c)
	}
	out := map[string]any{"plan": s.Plan.Name, "cells": cells, "counts": s.Counts()}
	if eta, ok := s.ETA(); ok {
		out["eta_s"] = eta.Seconds()
	}
	return out
}

// planData reads the plan's runs for report and export.
func (a *app) planData(path, results string) (*report.PlanData, error) {
	p, err := plan.Load(path)
	if err != nil {
		return nil, usagef("%s", err)
	}
	st, done, err := a.source(results)
	if err != nil {
		return nil, err
	}
	defer done()
	s, err := plan.State(p, st)
	if err != nil {
		return nil, err
	}
	d := &report.PlanData{Name: p.Name, File: p.Path}
	for _, ax := range p.Axes {
		d.Axes = append(d.Axes, ax.Name)
	}
	for _, cs := range s.Cells {
		row := report.PlanRow{Index: cs.Index, Cell: cs.ID, CellName: cs.Name, Target: cs.Target.Name,
			Workload: cs.Workload.Name, Repeat: cs.Repeat, State: cs.State, Axes: axisValues(d.Axes, cs.Axes)}
		if cs.Run != nil && (cs.State == plan.Done || cs.State == plan.Failed) {
			if row.Run, err = st.Load(cs.Run.ID); err != nil {
				return nil, err
			}
		}
		d.Rows = append(d.Rows, row)
	}
	return d, nil
}

func axisValues(names []string, set []plan.Setting) []string {
	out := make([]string, len(names))
	for i, n := range names {
		for _, s := range set {
			if s.Axis == n {
				out[i] = s.Value
			}
		}
	}
	return out
}

func (a *app) planReportCommand() *cobra.Command {
	var results, out string
	cmd := &cobra.Command{Use: "report FILE", Short: "One HTML page comparing the plan's cells",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := a.planData(args[0], results)
			if err != nil {
				return err
			}
			if out == "" {
				out = d.Name + ".html"
			}
			if err := writeFileWith(out, func(w io.Writer) error { return report.PlanHTML(w, d) }); err != nil {
				return err
			}
			fmt.Fprintf(a.Stderr, "wrote %s\n", out)
			return nil
		}}
	cmd.Flags().StringVar(&results, "results", "", resultsHelp)
	cmd.Flags().StringVarP(&out, "output", "o", "", "HTML file to write (default PLAN.html)")
	return cmd
}

func (a *app) planExportCommand() *cobra.Command {
	var results, format, out string
	cmd := &cobra.Command{Use: "export FILE", Short: "One CSV or JSON row per cell and repeat",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "csv" && format != "json" {
				return usagef("--format %q: csv or json", format)
			}
			d, err := a.planData(args[0], results)
			if err != nil {
				return err
			}
			write := func(w io.Writer) error { return report.PlanCSV(w, d) }
			if format == "json" {
				write = func(w io.Writer) error { return report.PlanJSON(w, d) }
			}
			if out == "" || out == "-" {
				return write(a.Stdout)
			}
			return writeFileWith(out, write)
		}}
	cmd.Flags().StringVar(&results, "results", "", resultsHelp)
	cmd.Flags().StringVar(&format, "format", "csv", "csv or json")
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: stdout)")
	return cmd
}

// writeFileWith writes a file through write, removing it on failure.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return usagef("%s", err)
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
