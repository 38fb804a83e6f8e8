package driver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
)

// Rule is one autostop condition: a metric measured over a sliding window
// of the last D of the run, "errors>25/s for 10s" (more than 25 failed
// transactions per second over the last 10 s), "errors.too_many_connections>1/s
// for 5s", "p95>500ms for 10s" (the 95th percentile of the transactions
// that ended in the last 10 s), "tps<10 for 30s". A window smooths bursts:
// errors that come in waves (clients retrying with backoff) still count at
// their average rate. The rule is checked once the run has D of intervals;
// when it holds the run stops cleanly and the rule is the stop reason.
type Rule struct {
	Text   string
	Metric string // errors, errors.<class>, tps, p50 p90 p95 p99 p999 max
	Op     string // > < >= <=
	Value  float64
	For    time.Duration

	class  metrics.ErrorClass
	window []windowed // the intervals of the last For, oldest first

	// Sampled metrics (server and host series such as
	// pg.connections.total) hold when every reading over For meets the
	// rule: holdFrom starts the streak.
	sampled  bool
	holdFrom time.Time
}

// Sampled reads the latest value of a sampled series (pg.*, host.*,
// log.*) for autostop rules; ok is false while it has no value.
type Sampled func(name string) (v float64, ok bool)

// IsSampled reports whether the rule watches a sampled series rather
// than the driver's own measurements.
func (r *Rule) IsSampled() bool { return r.sampled }

// windowed is what a rule keeps of one interval.
type windowed struct {
	start, end time.Time
	stats      metrics.TxStats // all transaction types merged
}

var ruleRE = regexp.MustCompile(`^\s*([A-Za-z0-9_.:]+)\s*(>=|<=|>|<)\s*([0-9.]+)\s*(ms|s|/s|%)?\s+for\s+(\S+)\s*$`)

// ParseRule parses an autostop rule; the error names the token at fault
// and what is expected.
func ParseRule(s string) (Rule, error) {
	m := ruleRE.FindStringSubmatch(s)
	if m == nil {
		return Rule{}, fmt.Errorf("autostop %q: expected METRIC OP VALUE for DURATION, e.g. 'errors>25/s for 10s', 'p95>500ms for 10s', 'tps<10 for 30s'", s)
	}
	r := Rule{Text: strings.TrimSpace(s), Metric: m[1], Op: m[2]}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return Rule{}, fmt.Errorf("autostop %q: %q is not a number", s, m[3])
	}
	unit := m[4]
	switch {
	case r.Metric == "errors" || strings.HasPrefix(r.Metric, "errors."):
		if unit != "/s" && unit != "" {
			return Rule{}, fmt.Errorf("autostop %q: errors are counted per second (write 25/s)", s)
		}
		if c, ok := strings.CutPrefix(r.Metric, "errors."); ok {
			class, known := metrics.ParseErrorClass(c)
			if !known || class == metrics.ClassNone {
				return Rule{}, fmt.Errorf("autostop %q: unknown error class %q", s, c)
			}
			r.class = class
		}
	case r.Metric == "tps":
		if unit != "" && unit != "/s" {
			return Rule{}, fmt.Errorf("autostop %q: tps takes a plain number", s)
		}
	case strings.HasPrefix(r.Metric, "pg.") || strings.HasPrefix(r.Metric, "host.") || strings.HasPrefix(r.Metric, "log."):
		r.sampled = true // a series of the samplers, in its own unit
	case isPercentile(r.Metric):
		switch unit {
		case "ms", "":
		case "s":
			v *= 1000
		default:
			return Rule{}, fmt.Errorf("autostop %q: latency needs ms or s", s)
		}
	default:
		return Rule{}, fmt.Errorf("autostop %q: unknown metric %q (use errors, errors.CLASS, tps, p50, p90, p95, p99, p999, max, or a sampled series such as pg.connections.total or host.cpu.busy_pct)", s, r.Metric)
	}
	r.Value = v
	d, err := parseSeconds(m[5])
	if err != nil || d <= 0 {
		return Rule{}, fmt.Errorf("autostop %q: %q is not a duration (10s, 1m)", s, m[5])
	}
	r.For = d
	return r, nil
}

func isPercentile(m string) bool {
	switch m {
	case "p50", "p90", "p95", "p99", "p999", "max":
		return true
	}
	return false
}

// value measures the rule's metric over the window.
func (r *Rule) value() float64 {
	var secs float64
	total := metrics.TxStats{}
	var hists []*metrics.TxStats
	for i := range r.window {
		w := &r.window[i]
		secs += w.end.Sub(w.start).Seconds()
		total.Count += w.stats.Count
		total.Errors.Add(&w.stats.Errors)
		hists = append(hists, &w.stats)
	}
	if secs <= 0 {
		return 0
	}
	switch {
	case r.Metric == "errors":
		return float64(total.Failed()) / secs
	case r.class != metrics.ClassNone:
		return float64(total.Errors[r.class]) / secs
	case r.Metric == "tps":
		return float64(total.Count) / secs
	}
	h := metrics.NewHistogram()
	for _, w := range hists {
		h.Merge(w.Latency)
	}
	st := metrics.Stats(h)
	switch r.Metric {
	case "p50":
		return st.P50
	case "p90":
		return st.P90
	case "p95":
		return st.P95
	case "p99":
		return st.P99
	case "p999":
		return st.P999
	}
	return st.Max
}

func (r *Rule) holds(v float64) bool {
	switch r.Op {
	case ">":
		return v > r.Value
	case "<":
		return v < r.Value
	case ">=":
		return v >= r.Value
	}
	return v <= r.Value
}

// observeSampled checks a sampled series at the end of an interval.
func (r *Rule) observeSampled(iv *metrics.Interval, sampled Sampled) bool {
	v, ok := 0.0, false
	if sampled != nil {
		v, ok = sampled(r.Metric)
	}
	if !ok || !r.holds(v) {
		r.holdFrom = time.Time{}
		return false
	}
	if r.holdFrom.IsZero() {
		r.holdFrom = iv.Start
	}
	return iv.End.Sub(r.holdFrom) >= r.For-time.Millisecond
}

// observe feeds one interval; it reports true when the window holds the
// last For of the run and the metric over it meets the rule.
func (r *Rule) observe(iv *metrics.Interval) bool {
	w := windowed{start: iv.Start, end: iv.End, stats: iv.Total()}
	if !isPercentile(r.Metric) {
		w.stats.Latency, w.stats.Service = nil, nil // counts are enough
	}
	r.window = append(r.window, w)
	// Drop intervals that lie wholly before the window.
	for len(r.window) > 1 && iv.End.Sub(r.window[1].start) >= r.For-time.Millisecond {
		r.window = r.window[1:]
	}
	if iv.End.Sub(r.window[0].start) < r.For-time.Millisecond {
		return false // not enough of the run yet
	}
	return r.holds(r.value())
}
