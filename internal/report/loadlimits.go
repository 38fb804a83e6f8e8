package report

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
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

// ruleRE mirrors driver.ParseRule's syntax (report must not import the
// driver); only rules on the driver's own measurements are judged here.
var ruleRE = regexp.MustCompile(`^\s*([A-Za-z0-9_.]+)\s*(>=|<=|>|<)\s*([0-9.]+)\s*(ms|s|/s)?\s+for\s+(\S+)\s*$`)

type limitRule struct {
	metric, op string
	value      float64
	window     time.Duration
}

func parseLimitRule(s string) (limitRule, bool) {
	m := ruleRE.FindStringSubmatch(s)
	if m == nil {
		return limitRule{}, false
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return limitRule{}, false
	}
	if m[4] == "s" {
		v *= 1000
	}
	d, err := time.ParseDuration(m[5])
	if err != nil || d <= 0 {
		return limitRule{}, false
	}
	switch {
	case m[1] == "tps" || m[1] == "errors" || strings.HasPrefix(m[1], "errors."),
		m[1] == "p50", m[1] == "p90", m[1] == "p95", m[1] == "p99", m[1] == "p999", m[1] == "max":
	default:
		return limitRule{}, false // a sampled series: not in the intervals
	}
	return limitRule{metric: m[1], op: m[2], value: v, window: d}, true
}

// met reports whether the rule's condition holds over ivs.
func (l limitRule) met(ivs []metrics.Interval) bool {
	var acc metrics.Accumulator
	for _, iv := range ivs {
		iv.Warmup = false
		acc.Add(iv)
	}
	var s metrics.Summary
	acc.Fill(&s)
	var v float64
	switch {
	case l.metric == "tps":
		v = s.TPS
	case l.metric == "errors":
		v = float64(s.Failed) / max(s.DurationS, 1e-9)
	case strings.HasPrefix(l.metric, "errors."):
		c, _ := metrics.ParseErrorClass(strings.TrimPrefix(l.metric, "errors."))
		v = float64(s.Errors[c]) / max(s.DurationS, 1e-9)
	default:
		v = map[string]float64{"p50": s.Latency.P50, "p90": s.Latency.P90, "p95": s.Latency.P95,
			"p99": s.Latency.P99, "p999": s.Latency.P999, "max": s.Latency.Max}[l.metric]
	}
	switch l.op {
	case ">":
		return v > l.value
	case "<":
		return v < l.value
	case ">=":
		return v >= l.value
	}
	return v <= l.value
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
	var rule limitRule
	var text string
	for _, t := range strings.Split(ld["autostop"], ";") {
		t = strings.TrimSpace(t)
		lr, ok := parseLimitRule(t)
		if !ok {
			continue
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
		for from > 0 && ivs[end].End.Sub(ivs[from].Start) < rule.window-time.Millisecond {
			from--
		}
		if ivs[end].End.Sub(ivs[from].Start) < rule.window-time.Millisecond {
			continue // not a whole window yet
		}
		win := ivs[from : end+1]
		if rule.met(win) {
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
