package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// LoadLimits are the figures of an open-loop run on a schedule with an
// autostop rule (issue 11.4), where mean tps over a run that stopped when
// the server gave up says little: the rate asked for when the rule fired
// (what yandex.tank publishes), and the highest rate held for the rule's
// whole window with the rule not met.
type LoadLimits struct {
	Rule    string  // the autostop rule judged
	Fired   bool    // the run was autostopped
	Reached float64 // target rate at the last measured interval, tx/s
	Held    float64 // highest rate held for the rule's window without meeting it; 0: never
}

// ruleMet reports whether rule holds over ivs, measured as the driver
// measures it while a run goes (metrics.Rule).
func ruleMet(rule *metrics.Rule, ivs []metrics.Interval) bool {
	var parts []metrics.TxStats
	var secs float64
	for i := range ivs {
		parts = append(parts, ivs[i].Tx...)
		secs += ivs[i].Duration().Seconds()
	}
	total := metrics.MergeTx("window", parts)
	return rule.Holds(rule.Measure(&total, secs))
}

// RunLoadLimits computes r's load limits from its intervals; ok is false
// unless r is an open-loop run with a schedule and an autostop rule on the
// driver's measurements.
func RunLoadLimits(r *store.Run) (LoadLimits, bool) {
	ld := r.Spec.Load
	if ld["model"] != "open" || ld["schedule"] == "" || ld["autostop"] == "" {
		return LoadLimits{}, false
	}
	// The rule that stopped the run (its stop reason names it), else the
	// first one judged on the driver's measurements.
	var rule metrics.Rule
	var text string
	for _, t := range strings.Split(ld["autostop"], ";") {
		t = strings.TrimSpace(t)
		lr, err := metrics.ParseRule(t)
		if err != nil || lr.Sampled {
			continue // a sampled series is not in the intervals
		}
		if text == "" || strings.Contains(r.Summary.StopReason, t) {
			rule, text = lr, t
		}
	}
	if text == "" {
		return LoadLimits{}, false
	}
	var ivs []metrics.Interval
	for _, iv := range r.Intervals {
		if !iv.Warmup {
			ivs = append(ivs, iv)
		}
	}
	if len(ivs) == 0 {
		return LoadLimits{}, false
	}
	l := LoadLimits{Rule: text, Fired: r.Status == metrics.StatusAutostopped, Reached: ivs[len(ivs)-1].TargetRate}
	for end := range ivs {
		from := end
		for from > 0 && ivs[end].End.Sub(ivs[from].Start) < rule.For-time.Millisecond {
			from--
		}
		if ivs[end].End.Sub(ivs[from].Start) < rule.For-time.Millisecond {
			continue // not a whole window yet
		}
		win := ivs[from : end+1]
		if ruleMet(&rule, win) {
			continue
		}
		low := win[0].TargetRate
		for _, iv := range win {
			low = min(low, iv.TargetRate)
		}
		l.Held = max(l.Held, low)
	}
	return l, true
}

// LoadLimitsText writes the load limits of a run, two lines.
func LoadLimitsText(w io.Writer, l LoadLimits) {
	what := "target rate at the end"
	if l.Fired {
		what = "rate reached when autostop fired"
	}
	fmt.Fprintf(w, "%s (%s): %.1f tx/s\n", what, l.Rule, l.Reached)
	if l.Held > 0 {
		fmt.Fprintf(w, "highest rate held for the rule's window without meeting it: %.1f tx/s\n", l.Held)
	} else {
		fmt.Fprintln(w, "highest rate held for the rule's window without meeting it: none (the rule held from the first window)")
	}
}
