package serve

import (
	"fmt"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/report/htmlw"
	"github.com/pgarena/pgarena/internal/store"
)

// ruleStatus is how close one autostop rule of a run is at its latest
// interval (issue 18: "the autostop rules with how close each is").
type ruleStatus struct {
	Rule     metrics.Rule
	Err      string        // the rule as recorded does not parse
	Measured bool          // Value is known
	Value    float64       // the rule's metric now, in its unit
	Percent  float64       // Value as a percentage of the rule's threshold
	Filled   time.Duration // of the window: measured so far (driver rules) or held (sampled)
	Holds    bool          // the metric meets the rule now
	Fired    bool          // this rule autostopped the run
}

// runRuleStatus measures every autostop rule recorded in the run's spec
// (the --autostop flags, "; "-joined in Spec.Load) as the driver measures
// it (metrics.Rule's Measure and Holds): over the intervals of the rule's
// window ending at the latest interval, warm-up included as the driver
// counts it; a sampled rule by its latest reading and how long the
// readings have met it. A run without rules has none.
func runRuleStatus(r *store.Run) []ruleStatus {
	var out []ruleStatus
	for _, text := range strings.Split(r.Spec.Load["autostop"], ";") {
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		rule, err := metrics.ParseRule(text)
		if err != nil {
			out = append(out, ruleStatus{Rule: metrics.Rule{Text: text}, Err: err.Error()})
			continue
		}
		rs := ruleStatus{Rule: rule}
		if rule.Sampled {
			measureSampled(&rs, r.Series(rule.Metric))
		} else {
			measureWindow(&rs, r.Intervals)
		}
		if rs.Measured && rule.Value != 0 {
			rs.Percent = 100 * rs.Value / rule.Value
		}
		rs.Fired = r.Status == metrics.StatusAutostopped && strings.Contains(r.Summary.StopReason, rule.Text)
		out = append(out, rs)
	}
	return out
}

// measureWindow measures a rule over the intervals of its window ending at
// the last one, as driver.Rule's observe keeps them.
func measureWindow(rs *ruleStatus, ivs []metrics.Interval) {
	if len(ivs) == 0 {
		return
	}
	last := ivs[len(ivs)-1]
	from := len(ivs) - 1
	for from > 0 && last.End.Sub(ivs[from].Start) < rs.Rule.For-time.Millisecond {
		from--
	}
	var parts []metrics.TxStats
	var secs float64
	for i := from; i < len(ivs); i++ {
		parts = append(parts, ivs[i].Tx...)
		secs += ivs[i].Duration().Seconds()
	}
	total := metrics.MergeTx("window", parts)
	rs.Measured = true
	rs.Value = rs.Rule.Measure(&total, secs)
	rs.Filled = min(last.End.Sub(ivs[from].Start), rs.Rule.For)
	rs.Holds = rs.Rule.Holds(rs.Value)
}

// measureSampled takes a sampled rule's latest reading and how long the
// readings up to it have met the rule.
func measureSampled(rs *ruleStatus, pts []store.Point) {
	if len(pts) == 0 {
		return
	}
	last := pts[len(pts)-1]
	rs.Measured, rs.Value = true, last.Value
	rs.Holds = rs.Rule.Holds(last.Value)
	if !rs.Holds {
		return
	}
	from := len(pts) - 1
	for from > 0 && rs.Rule.Holds(pts[from-1].Value) {
		from--
	}
	rs.Filled = min(last.Time.Sub(pts[from].Time), rs.Rule.For)
}

// unit is how the rule's metric is written.
func (rs ruleStatus) unit() string {
	switch {
	case rs.Rule.IsPercentile():
		return " ms"
	case rs.Rule.Sampled:
		return ""
	}
	return "/s"
}

// Text is the rule's line: "p95 > 500ms for 10s: now 230 ms (46% of the
// limit), over 10 s of the 10 s window".
func (rs ruleStatus) Text() string {
	if rs.Err != "" {
		return rs.Err
	}
	var b strings.Builder
	b.WriteString(rs.Rule.Text + ": ")
	if !rs.Measured {
		b.WriteString("no measurement yet")
		return b.String()
	}
	fmt.Fprintf(&b, "now %s%s (%.0f%% of the limit %s%s)", fmtValue(rs.Value), rs.unit(), rs.Percent, fmtValue(rs.Rule.Value), rs.unit())
	secs := func(d time.Duration) string { return fmtValue(d.Seconds()) }
	if rs.Rule.Sampled {
		fmt.Fprintf(&b, ", held %s s of %s s", secs(rs.Filled), secs(rs.Rule.For))
	} else {
		fmt.Fprintf(&b, ", over %s s of the %s s window", secs(rs.Filled), secs(rs.Rule.For))
	}
	if rs.Holds && !rs.Fired {
		b.WriteString("; the rule is met now")
	}
	return b.String()
}

func fmtValue(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// autostopHTML renders the section, or nothing for a run without rules.
func autostopHTML(r *store.Run) []byte {
	rules := runRuleStatus(r)
	if len(rules) == 0 {
		return nil
	}
	var w htmlw.Writer
	writeAutostop(&w, rules)
	return w.Bytes()
}

// writeAutostop writes the section of the rules; the live page replaces it
// on each update (live.js swaps sections by id).
func writeAutostop(w *htmlw.Writer, rules []ruleStatus) {
	w.S(`<section id="autostop"><h2>Autostop rules</h2><ul class="autostop">`)
	for _, r := range rules {
		w.S(`<li class="rule`)
		if r.Fired {
			w.S(" fired")
		} else if r.Holds {
			w.S(" holds")
		}
		w.S(`">`)
		w.T(r.Text())
		if r.Fired {
			w.S(" <strong>— fired: this rule stopped the run</strong>")
		}
		w.S("</li>")
	}
	w.S("</ul></section>\n")
}
