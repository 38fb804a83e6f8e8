package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// Metric is one row of a comparison: a number taken from a summary.
type Metric struct {
	Key, Title  string
	LowerBetter bool
	Value       func(*metrics.Summary) float64
	// Figure, if set, names the workload figure of merit the metric is
	// (TPC-C's nopm): it is compared only when every run has it.
	Figure string
}

// Metrics are the rows of a comparison, in order; their keys are what
// compare --metric accepts.
var Metrics = []Metric{
	{"tps", "tps", false, func(s *metrics.Summary) float64 { return s.TPS }, ""},
	{"avg", "latency avg ms", true, func(s *metrics.Summary) float64 { return s.Latency.Avg }, ""},
	{"p50", "latency p50 ms", true, func(s *metrics.Summary) float64 { return s.Latency.P50 }, ""},
	{"p95", "latency p95 ms", true, func(s *metrics.Summary) float64 { return s.Latency.P95 }, ""},
	{"p99", "latency p99 ms", true, func(s *metrics.Summary) float64 { return s.Latency.P99 }, ""},
	{"max", "latency max ms", true, func(s *metrics.Summary) float64 { return s.Latency.Max }, ""},
	{"errors", "failed/s", true, func(s *metrics.Summary) float64 {
		if s.DurationS <= 0 {
			return 0
		}
		return float64(s.Failed) / s.DurationS
	}, ""},
	{Key: "nopm", Title: "nopm", Value: nopm, Figure: "nopm"},
}

// nopm is TPC-C's new orders per minute as the run's summary has it (from
// the database, HammerDB's way); for a batch of intervals, which has no
// figures, the new-order transactions completed per minute stand in (they
// include the 1% rolled back, so they are only used for the noise).
func nopm(s *metrics.Summary) float64 {
	for _, f := range s.Figures {
		if f.Name == "nopm" && f.Tx == "" {
			return f.Value
		}
	}
	for _, t := range s.Tx {
		if t.Name == "new_order" {
			return 60 * t.TPS
		}
	}
	return 0
}

// HasFigure reports whether every run of groups has the figure named
// name (a metric with Figure set is meaningless otherwise).
func HasFigure(groups []*Group, name string) bool {
	for _, g := range groups {
		for _, r := range g.Runs {
			if !slices.ContainsFunc(r.Summary.Figures, func(f metrics.Figure) bool { return f.Name == name && f.Tx == "" }) {
				return false
			}
		}
	}
	return true
}

// MetricByKey returns the metric named key.
func MetricByKey(key string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// Group is one side of a comparison: one run, or repeats of one setup.
type Group struct {
	Name string
	Runs []*store.Run
}

// batches is how many batch means stand in for repeats when a group has a
// single run.
const batches = 10

// samples returns the values of m for g: one per run when g has repeats,
// else one per batch of the run's measured intervals (batch means: contiguous
// batches are nearly independent even when intervals are not).
func (g *Group) samples(m Metric) []float64 {
	if len(g.Runs) > 1 {
		xs := make([]float64, len(g.Runs))
		for i, r := range g.Runs {
			xs[i] = m.Value(&r.Summary)
		}
		return xs
	}
	if len(g.Runs) == 0 {
		return nil
	}
	var measured []metrics.Interval
	for _, iv := range g.Runs[0].Intervals {
		if !iv.Warmup {
			measured = append(measured, iv)
		}
	}
	k := min(batches, len(measured))
	xs := make([]float64, k)
	for b := range k {
		var acc metrics.Accumulator
		for _, iv := range measured[b*len(measured)/k : (b+1)*len(measured)/k] {
			acc.Add(iv)
		}
		var s metrics.Summary
		acc.Fill(&s)
		xs[b] = m.Value(&s)
	}
	return xs
}

// value is the point value of m for g: the run's own summary for a single
// run, the mean over repeats otherwise.
func (g *Group) value(m Metric) float64 {
	if len(g.Runs) == 1 {
		return m.Value(&g.Runs[0].Summary)
	}
	return MeanCI(g.samples(m)).Mean
}

// Comparability checks that runs measure the same thing. refuse is set
// when workloads or scale parameters differ (a comparison of those is
// meaningless without --force); warnings name other differences that may
// explain a result: client host, server version, server settings, clients.
func Comparability(runs []*store.Run) (refuse string, warnings []string) {
	if len(runs) < 2 {
		return "", nil
	}
	a := runs[0]
	differ := func(what string, get func(*store.Run) string) string {
		vals := map[string]bool{}
		var order []string
		for _, r := range runs {
			v := get(r)
			if !vals[v] {
				vals[v] = true
				order = append(order, fmt.Sprintf("%q", v))
			}
		}
		if len(order) < 2 {
			return ""
		}
		return fmt.Sprintf("%s differ (%s)", what, strings.Join(order, " vs "))
	}
	var refusals []string
	if d := differ("workloads", func(r *store.Run) string { return r.Spec.Workload }); d != "" {
		refusals = append(refusals, d)
	}
	for _, k := range []string{"scale", "warehouses", "table_size", "tables"} {
		if d := differ(k+" values", func(r *store.Run) string { return r.Spec.Params[k] }); d != "" {
			refusals = append(refusals, d)
		}
	}
	sweeps := 0
	for _, r := range runs {
		if len(r.Summary.Steps) > 0 {
			sweeps++
		}
	}
	if sweeps > 0 && sweeps < len(runs) {
		refusals = append(refusals, fmt.Sprintf("load differs: %d of %d runs are sweeps (each step is its own result; compare a step with a run by exporting it)", sweeps, len(runs)))
	}
	if d := differ("load models", func(r *store.Run) string { return loadModel(r) }); d != "" {
		refusals = append(refusals, d)
	}
	if len(refusals) > 0 {
		refuse = "refusing to compare runs whose " + strings.Join(refusals, " and ") + " (use --force to compare anyway)"
	}
	if d := differ("client hosts", func(r *store.Run) string { return r.Spec.Host.Hostname }); d != "" {
		warnings = append(warnings, d)
	}
	if d := differ("server versions", func(r *store.Run) string {
		if r.Server == nil {
			return "unknown"
		}
		return r.Server.Version
	}); d != "" {
		warnings = append(warnings, d)
	}
	if d := differ("cluster shapes", func(r *store.Run) string { return clusterShape(r.Server) }); d != "" {
		warnings = append(warnings, d)
	}
	if d := differ("run lengths", func(r *store.Run) string {
		if r.Spec.Transactions > 0 {
			return fmt.Sprintf("%d transactions per client", r.Spec.Transactions)
		}
		return fmt.Sprintf("%gs", r.Spec.DurationS)
	}); d != "" {
		warnings = append(warnings, d)
	}
	if d := differ("measured durations", func(r *store.Run) string { return fmt.Sprintf("%.0fs", r.Summary.DurationS) }); d != "" && stoppedEarly(runs) {
		warnings = append(warnings, d+": a run cut short is compared over a different stretch of its load")
	}
	if d := differ("workload parameters", func(r *store.Run) string { return paramString(r.Spec.Params) }); d != "" && refuse == "" {
		warnings = append(warnings, d)
	}
	if d := differ("client counts", func(r *store.Run) string { return fmt.Sprint(r.Spec.Clients) }); d != "" {
		warnings = append(warnings, d)
	}
	settings := map[string]bool{}
	for _, r := range runs[1:] {
		for _, k := range differentSettings(a.Server, r.Server) {
			settings[k] = true
		}
	}
	if len(settings) > 0 {
		names := slices.Sorted(maps.Keys(settings))
		more := ""
		if len(names) > 8 {
			more = fmt.Sprintf(" and %d more", len(names)-8)
			names = names[:8]
		}
		warnings = append(warnings, "server settings differ: "+strings.Join(names, ", ")+more)
	}
	return refuse, warnings
}

// stoppedEarly reports whether a run of runs did not run its full length.
func stoppedEarly(runs []*store.Run) bool {
	for _, r := range runs {
		if r.Status != metrics.StatusComplete {
			return true
		}
	}
	return false
}

func differentSettings(a, b *store.ServerInfo) []string {
	var sa, sb map[string]string
	if a != nil {
		sa = a.Settings
	}
	if b != nil {
		sb = b.Settings
	}
	var out []string
	for k, v := range sa {
		if w, ok := sb[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range sb {
		if _, ok := sa[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// Verdict is the outcome of comparing one group with the baseline on one
// metric.
type Verdict struct {
	Group, Baseline string
	Metric          Metric
	Rel             float64    // relative difference of the means (B−A)/A
	RelLo, RelHi    float64    // its 95% confidence interval, relative to A; NaN if unknown
	Diff            Difference // absolute
	Word            string     // "faster", "slower" ("better", "worse" for errors), "within noise", "no noise estimate"
}

// Judge compares group g with the baseline on m.
func Judge(base, g *Group, m Metric) Verdict {
	ea, eb := MeanCI(base.samples(m)), MeanCI(g.samples(m))
	d := Welch(ea, eb)
	// The interval's width comes from the samples; it is centred on the
	// point values the table shows (for a single run its summary, which
	// weighs intervals by length where a mean of batch means does not).
	va := base.value(m)
	d.Diff = g.value(m) - va
	v := Verdict{Group: g.Name, Baseline: base.Name, Metric: m, Diff: d, Rel: math.NaN(), RelLo: math.NaN(), RelHi: math.NaN()}
	if va != 0 {
		v.Rel = d.Diff / va
		if !math.IsNaN(d.Half) {
			v.RelLo, v.RelHi = (d.Diff-d.Half)/va, (d.Diff+d.Half)/va
		}
	}
	better, worse := "faster", "slower" // higher tps, lower latency
	if m.Key == "errors" {
		better, worse = "better", "worse"
	}
	switch {
	case math.IsNaN(d.Half):
		v.Word = "no noise estimate"
	case !d.Significant():
		v.Word = "within noise"
	case (d.Diff > 0) != m.LowerBetter:
		v.Word = better
	default:
		v.Word = worse
	}
	return v
}

func (v Verdict) String() string {
	rel := fmtRel(v.Rel)
	ci := ""
	if !math.IsNaN(v.RelLo) {
		ci = fmt.Sprintf(" (95%% CI %s .. %s)", fmtRel(v.RelLo), fmtRel(v.RelHi))
	}
	switch v.Word {
	case "within noise":
		return fmt.Sprintf("%s vs %s: within noise on %s, %s%s", v.Group, v.Baseline, v.Metric.Key, rel, ci)
	case "no noise estimate":
		return fmt.Sprintf("%s vs %s: %s on %s, no noise estimate (too few intervals)", v.Group, v.Baseline, rel, v.Metric.Key)
	}
	return fmt.Sprintf("%s is %s than %s on %s: %s%s", v.Group, v.Word, v.Baseline, v.Metric.Key, rel, ci)
}

func fmtRel(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*r)
}

// loadModel describes how a run loaded the server for comparability:
// closed or open loop, the rate or schedule and the autostop rules (sweeps
// are checked apart; ramp and warm-up are left out: they change how a run
// starts, not what it measures).
func loadModel(r *store.Run) string {
	l := r.Spec.Load
	if len(l) == 0 {
		return "closed"
	}
	parts := []string{cmp.Or(l["model"], "closed")}
	for _, k := range []string{"rate", "schedule", "autostop"} {
		if v := l[k]; v != "" {
			parts = append(parts, k+" "+v)
		}
	}
	return strings.Join(parts, ", ")
}

// stepGroups returns, for each step of the baseline's first run, the
// groups restricted to that step (matched by clients and rate); a group
// without the step is left out of it.
func stepGroups(groups []*Group) (titles []string, out [][]*Group) {
	if len(groups[0].Runs) == 0 {
		return nil, nil
	}
	for _, st := range groups[0].Runs[0].Summary.Steps {
		var gs []*Group
		for _, g := range groups {
			sg := &Group{Name: g.Name}
			for _, r := range g.Runs {
				if sr := stepRun(r, st.Clients, st.Rate); sr != nil {
					sg.Runs = append(sg.Runs, sr)
				}
			}
			if len(sg.Runs) > 0 {
				gs = append(gs, sg)
			}
		}
		title := fmt.Sprintf("step %d: %d clients", st.Step, st.Clients)
		if st.Rate > 0 {
			title += fmt.Sprintf(" at %g tx/s", st.Rate)
		}
		titles = append(titles, title)
		out = append(out, gs)
	}
	return titles, out
}

// stepRun is the step of sweep run r with the given clients and rate as a
// run of its own (summary and intervals of that step only); nil if r has
// no such step.
func stepRun(r *store.Run, clients int, rate float64) *store.Run {
	for i := range r.Summary.Steps {
		st := &r.Summary.Steps[i]
		if st.Clients != clients || st.Rate != rate {
			continue
		}
		sr := *r
		sr.Summary = StepAsSummary(&r.Summary, st)
		sr.Status = st.Status
		sr.Intervals = nil
		for _, iv := range r.Intervals {
			if iv.Step == st.Step {
				sr.Intervals = append(sr.Intervals, iv)
			}
		}
		return &sr
	}
	return nil
}

// CompareText writes the comparison of groups (the first is the baseline):
// one column per group with each metric's value and, for the verdict
// metric, its 95% confidence interval; the relative difference of each
// group from the baseline; and a verdict per group on metric.
//
// Sweeps are compared step by step: one comparison per step of the
// baseline, matched by clients and rate.
func CompareText(w io.Writer, groups []*Group, metric Metric) {
	if len(groups) == 0 {
		return
	}
	if len(groups[0].Runs) > 0 && len(groups[0].Runs[0].Summary.Steps) > 0 {
		titles, sgs := stepGroups(groups)
		for i, gs := range sgs {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "== %s ==\n", titles[i])
			if len(gs) < 2 || gs[0].Name != groups[0].Name {
				fmt.Fprintln(w, "only one of the runs has this step: nothing to compare")
				continue
			}
			compareText(w, gs, metric)
		}
		return
	}
	compareText(w, groups, metric)
}

func compareText(w io.Writer, groups []*Group, metric Metric) {
	base := groups[0]
	repeats := false
	for _, g := range groups {
		if len(g.Runs) > 1 {
			repeats = true
		}
	}
	for _, g := range groups {
		ids := make([]string, len(g.Runs))
		for i, r := range g.Runs {
			ids[i] = r.ID
			if r.Status != metrics.StatusComplete {
				ids[i] += " (" + r.Status + ")"
			}
		}
		fmt.Fprintf(w, "%s: %s\n", g.Name, strings.Join(ids, ", "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "metric\t" + base.Name + "\t"
	for _, g := range groups[1:] {
		head += g.Name + "\tΔ\t"
	}
	fmt.Fprintln(tw, head)
	for _, m := range Metrics {
		if m.Figure != "" && !HasFigure(groups, m.Figure) {
			continue
		}
		line := m.Title + "\t" + cell(base, m, m.Key == metric.Key) + "\t"
		bv := base.value(m)
		for _, g := range groups[1:] {
			rel := math.NaN()
			if bv != 0 {
				rel = (g.value(m) - bv) / bv
			}
			line += cell(g, m, m.Key == metric.Key) + "\t" + fmtRel(rel) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	fmt.Fprintln(tw, "failed\t"+failed(base)+"\t"+func() string {
		var s string
		for _, g := range groups[1:] {
			s += failed(g) + "\t\t"
		}
		return s
	}())
	if slices.ContainsFunc(groups, func(g *Group) bool { return unfinished(g) != "0" }) {
		line := "unfinished\t" + unfinished(base) + "\t"
		for _, g := range groups[1:] {
			line += unfinished(g) + "\t\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintln(w)
	replicationCompare(w, groups)
	failoverCompare(w, groups)
	if repeats {
		fmt.Fprintf(w, "noise: 95%% CI (t-distribution) of the mean over each group's runs; a single run uses %d batch means of its intervals\n", batches)
	} else {
		fmt.Fprintf(w, "noise: 95%% CI (t-distribution) from %d batch means of each run's measured intervals; repeat runs for a firmer verdict\n", batches)
	}
	if limitsText(w, groups) {
		return
	}
	if metric.Figure != "" && !HasFigure(groups, metric.Figure) {
		fmt.Fprintf(w, "verdict: none on %s: not every run has it (use another --metric)\n", metric.Key)
		return
	}
	for _, g := range groups[1:] {
		fmt.Fprintln(w, "verdict: "+Judge(base, g, metric).String())
	}
}

// limitsText compares the load limits of open-loop schedule runs with an
// autostop rule, when every run has them, and reports whether it did: their
// mean tps covers different stretches of the schedule, so the verdict is on
// the highest rate held instead.
func limitsText(w io.Writer, groups []*Group) bool {
	type lims struct{ reached, held float64 }
	vals := make([]lims, len(groups))
	rule := ""
	for i, g := range groups {
		for _, r := range g.Runs {
			l, ok := RunLoadLimits(r)
			if !ok || (rule != "" && l.Rule != rule) {
				return false
			}
			rule = l.Rule
			vals[i].reached += l.Reached / float64(len(g.Runs))
			vals[i].held += l.Held / float64(len(g.Runs))
		}
	}
	fmt.Fprintf(w, "load limits (open loop on a schedule, autostop %q; means over a group's runs):\n", rule)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head, reached, held := "\t"+groups[0].Name+"\t", "rate reached when stopped tx/s\t"+fmtNum(vals[0].reached)+"\t",
		"highest rate held tx/s\t"+fmtNum(vals[0].held)+"\t"
	for i, g := range groups[1:] {
		head += g.Name + "\tΔ\t"
		reached += fmtNum(vals[i+1].reached) + "\t" + fmtRel(relTo(vals[i+1].reached, vals[0].reached)) + "\t"
		held += fmtNum(vals[i+1].held) + "\t" + fmtRel(relTo(vals[i+1].held, vals[0].held)) + "\t"
	}
	fmt.Fprintln(tw, head)
	fmt.Fprintln(tw, reached)
	fmt.Fprintln(tw, held)
	tw.Flush()
	fmt.Fprintln(w, "these runs stopped at different points of their schedule: their mean tps and latency above cover different loads and are not judged")
	for i, g := range groups[1:] {
		rel := relTo(vals[i+1].held, vals[0].held)
		word := "the same highest rate as"
		switch {
		case rel > 0:
			word = "a higher rate than"
		case rel < 0:
			word = "a lower rate than"
		}
		fmt.Fprintf(w, "verdict: %s held %s %s: %s (highest rate held; one figure per run, no noise estimate)\n",
			g.Name, word, groups[0].Name, fmtRel(rel))
	}
	return true
}

func cell(g *Group, m Metric, withCI bool) string {
	v := g.value(m)
	s := fmtNum(v)
	if withCI {
		e := MeanCI(g.samples(m))
		if !math.IsNaN(e.Half) {
			s += " ± " + fmtNum(e.Half)
		}
		if len(g.Runs) > 1 {
			s += fmt.Sprintf(" (n=%d)", len(g.Runs))
		}
	}
	return s
}

func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "n/a"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func failed(g *Group) string {
	var n int64
	var e metrics.ErrorCounts
	for _, r := range g.Runs {
		n += r.Summary.Failed
		e.Add(&r.Summary.Errors)
	}
	if n == 0 {
		return "0"
	}
	s := fmt.Sprint(n)
	if len(g.Runs) > 1 {
		s = fmt.Sprintf("%d in %d runs", n, len(g.Runs))
	}
	return s + " (" + (&e).List() + ")"
}

// unfinished is the group's transactions still running at the end of the
// measured time, with those cancelled in the drain.
func unfinished(g *Group) string {
	var n, cancelled int64
	for _, r := range g.Runs {
		n += r.Summary.Unfinished
		if d := r.Summary.Drain; d != nil {
			cancelled += d.Cancelled
		}
	}
	s := fmt.Sprint(n)
	if n > 0 && len(g.Runs) > 1 {
		s = fmt.Sprintf("%d in %d runs", n, len(g.Runs))
	}
	if cancelled > 0 {
		s += fmt.Sprintf(" (%d cancelled)", cancelled)
	}
	return s
}

// clusterShape is a run's target shape for compare: a plain server, or
// Citus with its workers and distributed tables.
func clusterShape(s *store.ServerInfo) string {
	if s == nil || s.Citus == nil {
		return "plain PostgreSQL"
	}
	var dist []string
	for _, t := range s.Citus.Tables {
		if t.Type == "distributed" {
			dist = append(dist, fmt.Sprintf("%s/%d", t.Name, t.Shards))
		}
	}
	return fmt.Sprintf("Citus with %d workers (distributed: %s)", s.Citus.ActiveWorkers(), strings.Join(dist, " "))
}
