package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
)

// ProgressLine formats one progress report, pgbench -P style, for the
// intervals ivs that together cover (elapsed−len, elapsed]:
//
//	progress: 10.0 s, 1234.5 tps, lat 6.4 ms stddev 2.1, p95 9.1 ms, p99 12.0 ms, failed 0
//
// extra items ("nopm 20510") follow the tps.
func ProgressLine(elapsed time.Duration, ivs []metrics.Interval, extra ...string) string {
	var p Progress
	for _, iv := range ivs {
		p.Add(iv)
	}
	return p.Line(elapsed, extra...)
}

// Progress adds up intervals for one ProgressLine as they come, keeping
// nothing of them (their histograms are merged into its own).
type Progress struct {
	acc          metrics.Accumulator
	span         time.Duration
	connected    int
	clientsKnown bool
}

// Add adds iv, warm-up or not (progress shows warm-up too).
func (p *Progress) Add(iv metrics.Interval) {
	iv.Warmup = false
	p.acc.Add(iv)
	p.span += iv.Duration()
	p.connected, p.clientsKnown = iv.Connected, true
}

// Reset empties p for the next line, keeping its histograms' memory.
func (p *Progress) Reset() {
	p.acc.Reset()
	p.span, p.connected, p.clientsKnown = 0, 0, false
}

// Line is ProgressLine of the intervals added.
func (p *Progress) Line(elapsed time.Duration, extra ...string) string {
	acc, span, connected, clientsKnown := &p.acc, p.span, p.connected, p.clientsKnown
	var total metrics.TxStats
	if len(acc.Tx) == 1 {
		total = acc.Tx[0] // read, not changed: shared, as Accumulator.Fill does
	} else {
		total = metrics.MergeTx("total", acc.Tx)
	}
	tps := 0.0
	if span > 0 {
		tps = float64(total.Count) / span.Seconds()
	}
	lat := metrics.Stats(total.Latency)
	var b strings.Builder
	fmt.Fprintf(&b, "progress: %.1f s, %.1f tps", elapsed.Seconds(), tps)
	for _, e := range extra {
		b.WriteString(", " + e)
	}
	fmt.Fprintf(&b, ", lat %.1f ms stddev %.1f, p95 %.1f ms, p99 %.1f ms, failed %d",
		lat.Avg, lat.Stddev, lat.P95, lat.P99, total.Failed())
	if n := total.Failed(); n > 0 {
		b.WriteString(" (" + (&total.Errors).List() + ")")
	}
	if total.Retries > 0 {
		fmt.Fprintf(&b, ", retried %d", total.Retries)
	}
	if clientsKnown {
		fmt.Fprintf(&b, ", connected %d", connected)
	}
	return b.String()
}

// errorLines says what the failures of s said: per class (largest first)
// and transaction type, the first and the last failure's text (one line
// when they said the same), then what to do about the class, once.
func errorLines(s *metrics.Summary) []string {
	var lines []string
	for _, c := range (&s.Errors).BySize() {
		for _, t := range s.Tx {
			ex, ok := t.ErrorExamples.Get(c)
			if !ok {
				continue
			}
			who := c.String()
			if len(s.Tx) > 1 {
				who += " in " + t.Name
			}
			lines = append(lines, exampleLines(s, who, ex)...)
		}
		if a := s.ErrorAdvice[c.String()]; a != "" {
			lines = append(lines, fmt.Sprintf("what to do about %s: %s", c, a))
		}
	}
	return lines
}

// exampleLines says what the first and the last failure of ex said (one
// line when the same), naming them who.
func exampleLines(s *metrics.Summary, who string, ex metrics.ErrorExample) []string {
	if ex.SameText() {
		return []string{fmt.Sprintf("%s, first at %s, last at %s: %s", who, sinceStart(s, ex.First.Time),
			sinceStart(s, ex.Last.Time), DetailText(ex.First))}
	}
	return []string{fmt.Sprintf("%s, first at %s: %s", who, sinceStart(s, ex.First.Time), DetailText(ex.First)),
		fmt.Sprintf("%s, last at %s: %s", who, sinceStart(s, ex.Last.Time), DetailText(ex.Last))}
}

// DetailText renders what one failure said as one line:
//
//	ERROR 42P01: relation "pgbench_accounts" does not exist (detail: …; hint: …)
func DetailText(d pgerr.ErrorDetail) string {
	var b strings.Builder
	if d.Severity != "" {
		b.WriteString(d.Severity)
	}
	if d.SQLState != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(d.SQLState)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	var extra []string
	if d.Detail != "" {
		extra = append(extra, "detail: "+d.Detail)
	}
	if d.Hint != "" {
		extra = append(extra, "hint: "+d.Hint)
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, "; ") + ")")
	}
	return b.String()
}

// sinceStart renders t as seconds since the run's start ("12.3 s").
func sinceStart(s *metrics.Summary, t time.Time) string {
	if s.Start.IsZero() || t.IsZero() {
		return t.UTC().Format("15:04:05.000")
	}
	return fmt.Sprintf("%.1f s", t.Sub(s.Start).Seconds())
}

func pct(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// workloadParamLines prints the workload parameters that shape the
// numbers, as the database had them (workload.Flagser.Params after
// Prepare): tpcb's partitions and fill factor as pgbench prints them when
// not the defaults, tpcc's warehouses.
func workloadParamLines(p func(string, ...any), params map[string]string) {
	if n := params["partitions"]; n != "" && n != "0" {
		p("partition method: range")
		p("partitions: %s", n)
	}
	if ff := params["fillfactor"]; ff != "" && ff != "100" {
		p("fillfactor: %s", ff)
	}
	if wh, ok := params["warehouses"]; ok {
		p("warehouses: %s", wh)
	}
}

// SummaryText writes the end-of-run summary in pgbench's layout, with
// pgarena's additions (percentiles, error classes, per-type rows, status).
//
// A sweep (-c 2,4,8) is several results, not one: its steps come first,
// one row each, and the numbers of all steps together follow indented
// under a heading that says so (a "tps = " line at the start of a line is
// what pgbench parsers read as the result).
func SummaryText(w io.Writer, s *metrics.Summary) {
	ind := "" // the indent of the lines of the run's totals
	p := func(format string, args ...any) { fmt.Fprintf(w, ind+format+"\n", args...) }
	script := s.Params["script"]
	if script == "" && len(s.Tx) == 1 {
		script = s.Tx[0].Name
	}
	p("run: %s (%s)", s.RunID, s.Workload)
	if s.Label != "" {
		p("label: %s", s.Label)
	}
	if script != "" {
		p("transaction type: %s", script)
	}
	if sc, ok := s.Params["scale"]; ok {
		p("scaling factor: %s", sc)
	}
	workloadParamLines(p, s.Params)
	mode := s.QueryMode
	if s.Params["stored_procs"] == "true" {
		// -M still sets the protocol of the calls.
		mode = "stored procedures (" + s.QueryMode + " calls)"
	}
	p("query mode: %s", mode)
	for _, l := range s.Topology {
		p("%s", l)
	}
	if len(s.SessionSettings) > 0 {
		p("session settings: %s", strings.Join(s.SessionSettings, ", "))
	}
	sweep := len(s.Steps) > 0
	if !sweep {
		p("number of clients: %d", s.Clients)
	}
	if s.NotConnected > 0 {
		p("  %d clients could not connect (the server refused them) and sat the run out", s.NotConnected)
	}
	p("number of threads: %d", s.Threads)
	if sweep {
		stepsText(w, s.Steps)
		p("all steps together (%d load levels blended, not one result):", len(s.Steps))
		ind = "  "
	}
	p("duration: %.1f s", s.DurationS)
	if s.WarmupS > 0 {
		p("warm-up excluded: %.1f s", s.WarmupS)
	}
	processed := s.Transactions + s.Failed
	p("number of transactions actually processed: %d", s.Transactions)
	p("number of failed transactions: %d (%.3f%%)", s.Failed, pct(s.Failed, processed))
	if s.Failed > 0 {
		p("  failed by class: %s", (&s.Errors).List())
		for _, l := range errorLines(s) {
			p("    %s", l)
		}
	}
	if s.Unfinished > 0 {
		unfinishedLine(p, s)
	}
	p("number of transactions retried: %d (%.3f%%)", s.Retried, pct(s.Retried, processed))
	if s.Retries > 0 || s.MaxTries > 1 {
		p("total number of retries: %d", s.Retries)
	}
	l := s.Latency
	p("latency average = %.3f ms", l.Avg)
	p("latency stddev = %.3f ms", l.Stddev)
	p("latency percentiles: p50 %.3f, p90 %.3f, p95 %.3f, p99 %.3f, p99.9 %.3f, max %.3f ms",
		l.P50, l.P90, l.P95, l.P99, l.P999, l.Max)
	if s.Service != l && s.Service.Avg > 0 {
		p("service time average = %.3f ms (p99 %.3f ms)", s.Service.Avg, s.Service.P99)
	}
	p("initial connection time = %.3f ms", s.InitialConnectMS)
	if s.Reconnects > 0 {
		p("reconnects = %d", s.Reconnects)
	}
	p("tps = %.6f (without initial connection time)", s.TPS)
	rollbacks, mins := map[string]float64{}, map[string]float64{}
	for _, f := range s.Figures {
		if f.Tx != "" {
			switch f.Name {
			case "rollbacks":
				rollbacks[f.Tx] = f.Value
			case "min": // a type's shortest latency (tpch)
				mins[f.Tx] = f.Value
			}
			continue
		}
		line := fmt.Sprintf("%s = %s %s", f.Name, strconv.FormatFloat(f.Value, 'f', -1, 64), f.Unit)
		if f.Note != "" {
			line += " (" + f.Note + ")"
		}
		p("%s", line)
	}
	if len(s.Tx) > 1 {
		p("per transaction type (latency in ms):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "  type\ttransactions\tfailed\t"
		if len(rollbacks) > 0 {
			head += "rollbacks\t"
		}
		head += "tps\t"
		if len(mins) > 0 {
			head += "min\t"
		}
		fmt.Fprintln(tw, head+"avg\tp50\tp90\tp95\tp99\tmax\t")
		for _, t := range s.Tx {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t", t.Name, t.Transactions, t.Failed)
			if len(rollbacks) > 0 {
				fmt.Fprintf(tw, "%.0f\t", rollbacks[t.Name])
			}
			l := t.Latency
			fmt.Fprintf(tw, "%.1f\t", t.TPS)
			if len(mins) > 0 {
				fmt.Fprintf(tw, "%.3f\t", mins[t.Name])
			}
			fmt.Fprintf(tw, "%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", l.Avg, l.P50, l.P90, l.P95, l.P99, l.Max)
		}
		tw.Flush()
		for _, t := range s.Tx {
			if t.Failed > 0 {
				p("  %s failed by class: %s", t.Name, (&t.Errors).List())
			}
		}
	}
	statementsText(p, s)
	if s.Skipped > 0 || s.Late > 0 {
		p("number of transactions skipped (later than the latency limit): %d", s.Skipped)
		p("number of transactions above the latency limit: %d", s.Late)
	}
	if s.TargetRate > 0 {
		p("target rate = %.3f tx/s (open loop); not started when the run ended: %d", s.TargetRate, s.Unstarted)
	}
	ind = ""
	groupsText(w, s)
	replicationText(w, s)
	failoverText(w, s)
	status := s.Status
	if s.StopReason != "" {
		status += ": " + s.StopReason
	}
	p("status: %s", status)
}

// statementsText prints the per-statement figures (-r) as pgbench 15
// prints them: each command's mean time in ms, the transactions that
// failed at it and, when transactions may be retried (--max-tries above
// 1), the retries after a failure at it, then the command. Several scripts
// each get pgbench's "SQL script N: NAME" block.
func statementsText(p func(string, ...any), s *metrics.Summary) {
	var txs []metrics.TxSummary
	retries := s.MaxTries > 1
	for _, t := range s.Tx {
		if len(t.Statements) > 0 {
			txs = append(txs, t)
		}
		for _, st := range t.Statements {
			// a run that did not keep --max-tries (interrupted): any retry
			retries = retries || s.MaxTries == 0 && st.Retries > 0
		}
	}
	if len(txs) == 0 {
		return
	}
	head := "statement latencies in milliseconds and failures:"
	if retries {
		head = "statement latencies in milliseconds, failures and retries:"
	}
	for i, t := range txs {
		if len(s.Tx) > 1 {
			p("SQL script %d: %s", i+1, t.Name)
			p(" - %s", head)
		} else {
			p("%s", head)
		}
		for _, st := range t.Statements {
			if retries {
				p("   %11.3f  %10d  %10d  %s", st.AvgMS, st.Failures, st.Retries, st.Command)
			} else {
				p("   %11.3f  %10d  %s", st.AvgMS, st.Failures, st.Command)
			}
		}
	}
}

// stepsText writes the steps of a sweep, one row each.
func stepsText(w io.Writer, steps []metrics.StepSummary) {
	fmt.Fprintf(w, "sweep: %d steps, each its own result (latency in ms):\n", len(steps))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The unfinished column only when some step had any (never in -t).
	withUnfinished := slices.ContainsFunc(steps, func(st metrics.StepSummary) bool { return st.Unfinished > 0 })
	fmt.Fprintln(tw, "  step\tclients\trate\tduration s\ttransactions\tfailed\t"+unfinishedHead(withUnfinished)+"tps\tavg\tp50\tp95\tp99\tstatus\t")
	for _, st := range steps {
		rate := "-"
		if st.Rate > 0 {
			rate = strconv.FormatFloat(st.Rate, 'g', -1, 64)
		}
		status := st.Status
		if st.StopReason != "" {
			status += ": " + st.StopReason
		}
		l := st.Latency
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%.1f\t%d\t%d\t%s%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", st.Step, st.Clients, rate,
			st.DurationS, st.Transactions, st.Failed, unfinishedCell(withUnfinished, st.Unfinished, st.Drain), st.TPS, l.Avg, l.P50, l.P95, l.P99, status)
	}
	tw.Flush()
}

// RunRow is one line of a run listing.
type RunRow struct {
	ID       string
	Created  time.Time
	Label    string
	Workload string
	Clients  int
	TPS      float64
	P95MS    float64
	Status   string
}

// RunList writes runs as an aligned table, in the order given, with times
// in loc.
func RunList(w io.Writer, rows []RunRow, loc *time.Location) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tLABEL\tWORKLOAD\tCLIENTS\tTPS\tP95 MS\tSTATUS")
	for _, r := range rows {
		label := r.Label
		if label == "" {
			label = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.1f\t%.2f\t%s\n", r.ID, r.Created.In(loc).Format("2006-01-02 15:04:05"),
			label, r.Workload, r.Clients, r.TPS, r.P95MS, r.Status)
	}
	tw.Flush()
}

// groupsText writes one row per client group of a run with several.
func groupsText(w io.Writer, s *metrics.Summary) {
	if len(s.Groups) == 0 {
		return
	}
	fmt.Fprintln(w, "client groups (the numbers above cover all groups together):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	withUnfinished := s.Unfinished > 0
	fmt.Fprintln(tw, "  group\tworkload\tclients\tquery mode\ttps\tfailed\t"+unfinishedHead(withUnfinished)+"avg ms\tp95 ms\tp99 ms\t")
	for _, g := range s.Groups {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%.1f\t%d\t%s%.3f\t%.3f\t%.3f\t\n", g.Name, g.Workload, g.Clients, g.QueryMode,
			g.TPS, g.Failed, unfinishedCell(withUnfinished, g.Unfinished, g.Drain), g.Latency.Avg, g.Latency.P95, g.Latency.P99)
	}
	tw.Flush()
}

// unfinishedHead is a table's unfinished column head, if it has one.
func unfinishedHead(with bool) string {
	if !with {
		return ""
	}
	return "unfinished\t"
}

// unfinishedCell is a table's count of unfinished transactions, with
// those of them cancelled in the drain ("4 (4 cancelled)"), if the table
// has the column.
func unfinishedCell(with bool, n int64, d *metrics.DrainSummary) string {
	switch {
	case !with:
		return ""
	case d != nil && d.Cancelled > 0:
		return fmt.Sprintf("%d (%d cancelled)\t", n, d.Cancelled)
	}
	return strconv.FormatInt(n, 10) + "\t"
}

// unfinishedLine says how many transactions were still running when the
// measured time ended, for how long, and what became of them in the drain.
func unfinishedLine(p func(string, ...any), s *metrics.Summary) {
	line := fmt.Sprintf("number of transactions unfinished at the end: %d", s.Unfinished)
	if d := s.Drain; d != nil {
		line += fmt.Sprintf(" (running up to %.3f ms then); in the %.3f s drain after it (not measured): %d committed, %d failed, %d cancelled",
			d.SoFarMaxMS, d.DrainS, d.Committed, d.Failed, d.Cancelled)
		if d.Abandoned > 0 {
			line += fmt.Sprintf(" (%d clients abandoned)", d.Abandoned)
		}
	}
	p("%s", line)
	if d := s.Drain; d != nil && d.Errors.Total() > 0 {
		p("  failed or cancelled in the drain, by class: %s", (&d.Errors).List())
		for _, c := range (&d.Errors).BySize() {
			if ex, ok := d.ErrorExamples.Get(c); ok {
				for _, l := range exampleLines(s, c.String(), ex) {
					p("    %s", l)
				}
			}
		}
	}
}
