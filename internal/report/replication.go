package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/pgarena/pgarena/internal/metrics"
)

// replicationText writes how the replicas kept up: each replica's lag and
// catch-up, the sustainable rate, and in a sweep one row per step (the
// table of raw against sustainable tps by clients).
func replicationText(w io.Writer, s *metrics.Summary) {
	r := s.Replication
	if r == nil {
		return
	}
	fmt.Fprintln(w, "replication (lag by pgarena's heartbeat, seconds):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  replica\tkind\tlag max\tlag p99\tlag at end\tcatch-up\tcaught up\tunreadable s\t")
	for _, l := range r.Replicas {
		catchUp, caught := fmt.Sprintf("%.2f", l.CatchUpS), "yes"
		switch {
		case !l.CaughtUp && l.Error != "":
			catchUp, caught = "> "+catchUp+" (down)", "NO"
		case !l.CaughtUp:
			catchUp, caught = "> "+catchUp+" (timed out)", "NO"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%.3f\t%.3f\t%.3f\t%s\t%s\t%.1f\t\n", l.Name, l.Kind, l.LagMaxS, l.LagP99S, l.LagEndS, catchUp, caught, l.UnreadableS)
	}
	tw.Flush()
	if p := r.Problem(); p != "" {
		fmt.Fprintf(w, "replication degraded: %s\n", p)
	}
	if len(s.Steps) > 0 && s.Steps[0].Replication != nil {
		fmt.Fprintln(w, "replication per step:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  step\tclients\ttps\tcatch-up s\tsustainable tps\tratio\tlag max s\t")
		for _, st := range s.Steps {
			if sr := st.Replication; sr != nil {
				fmt.Fprintf(tw, "  %d\t%d\t%.1f\t%s\t%s\t%.3f\t%.3f\t\n", st.Step, st.Clients, st.TPS,
					catchUpCell(sr), sustainableCell(sr), sr.SustainableRatio, lagMax(sr))
			}
		}
		tw.Flush()
	}
	bound := ""
	if !r.CaughtUp {
		bound = "; an upper bound: a replica did not catch up"
	}
	fmt.Fprintf(w, "sustainable tps = %s (%.3f of tps; transactions / (duration %.1f s + catch-up %s s)%s)\n",
		sustainableCell(r), r.SustainableRatio, s.DurationS, catchUpCell(r), bound)
}

func catchUpCell(r *metrics.Replication) string {
	if !r.CaughtUp {
		return fmt.Sprintf(">%.2f", r.CatchUpS)
	}
	return fmt.Sprintf("%.2f", r.CatchUpS)
}

// sustainableCell is the sustainable rate, "<= x" when a replica did not
// catch up (the rate is then at most that).
func sustainableCell(r *metrics.Replication) string {
	if !r.CaughtUp {
		return fmt.Sprintf("<=%.1f", r.SustainableTPS)
	}
	return fmt.Sprintf("%.1f", r.SustainableTPS)
}

func lagMax(r *metrics.Replication) float64 {
	m := 0.0
	for _, l := range r.Replicas {
		m = max(m, l.LagMaxS)
	}
	return m
}

// replicationCells are the CSV cells of r (empty strings without
// replicas): the columns from catch_up_s to replica_lag_p99_s, then
// caught_up, sustainable_upper_bound and replica_unreadable_s.
func replicationCells(r *metrics.Replication) (first, added []string) {
	if r == nil {
		return []string{"", "", "", "", ""}, []string{"", "", ""}
	}
	p99, unread := 0.0, 0.0
	for _, l := range r.Replicas {
		p99 = max(p99, l.LagP99S)
		unread = max(unread, l.UnreadableS)
	}
	return []string{ftoa(r.CatchUpS), ftoa(r.SustainableTPS), ftoa(r.SustainableRatio), ftoa(lagMax(r)), ftoa(p99)},
		[]string{strconv.FormatBool(r.CaughtUp), strconv.FormatBool(r.SustainableUpperBound), ftoa(unread)}
}

// replicationCompare writes the replication rows of a comparison when
// every run has replicas: the mean over each group's runs, without a noise
// band (a run has one catch-up, not a series to take batches of).
func replicationCompare(w io.Writer, groups []*Group) {
	// bound: the row's mean is an upper (<=) or lower (>=) bound when a
	// run's replica did not catch up.
	rows := []struct {
		title string
		value func(*metrics.Replication) float64
		bound string
	}{
		{"sustainable tps", func(r *metrics.Replication) float64 { return r.SustainableTPS }, "<="},
		{"sustainable/tps", func(r *metrics.Replication) float64 { return r.SustainableRatio }, "<="},
		{"catch-up s", func(r *metrics.Replication) float64 { return r.CatchUpS }, ">="},
		{"replica lag max s", lagMax, ""},
	}
	behind := func(g *Group) int {
		n := 0
		for _, r := range g.Runs {
			if !r.Summary.Replication.CaughtUp {
				n++
			}
		}
		return n
	}
	cell := func(g *Group, v float64, bound string) string {
		if behind(g) > 0 {
			return bound + fmtNum(v)
		}
		return fmtNum(v)
	}
	mean := func(g *Group, f func(*metrics.Replication) float64) float64 {
		sum := 0.0
		for _, r := range g.Runs {
			sum += f(r.Summary.Replication)
		}
		return sum / float64(len(g.Runs))
	}
	for _, g := range groups {
		if len(g.Runs) == 0 {
			return
		}
		for _, r := range g.Runs {
			if r.Summary.Replication == nil {
				return
			}
		}
	}
	fmt.Fprintln(w, "replication (mean over runs; no noise estimate: one catch-up per run):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "metric\t" + groups[0].Name + "\t"
	for _, g := range groups[1:] {
		head += g.Name + "\tΔ\t"
	}
	fmt.Fprintln(tw, head)
	for _, row := range rows {
		bv := mean(groups[0], row.value)
		line := row.title + "\t" + cell(groups[0], bv, row.bound) + "\t"
		for _, g := range groups[1:] {
			v := mean(g, row.value)
			// Against a baseline that is itself a bound, the change is
			// not known.
			rel := math.NaN()
			if bv != 0 && (behind(groups[0]) == 0 || row.bound == "") {
				rel = (v - bv) / bv
			}
			d := fmtRel(rel)
			if behind(g) > 0 && !math.IsNaN(rel) {
				d = row.bound + d
			}
			line += cell(g, v, row.bound) + "\t" + d + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	caught := func(g *Group) string { return fmt.Sprintf("%d of %d", len(g.Runs)-behind(g), len(g.Runs)) }
	line := "runs caught up\t" + caught(groups[0]) + "\t"
	for _, g := range groups[1:] {
		line += caught(g) + "\t\t"
	}
	fmt.Fprintln(tw, line)
	tw.Flush()
	fmt.Fprintln(w)
}
