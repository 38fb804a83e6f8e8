package driver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
)

// Rule is one autostop condition over per-interval metrics, held for a
// duration: "errors>25/s for 10s", "errors.too_many_connections>1/s for 5s",
// "p95>500ms for 10s", "tps<10 for 30s". When it has held for its whole
// duration the run stops cleanly and the rule is the stop reason.
type Rule struct {
	Text   string
	Metric string // errors, errors.<class>, tps, p50 p90 p95 p99 p999 max
	Op     string // > < >= <=
	Value  float64
	For    time.Duration

	class    metrics.ErrorClass
	holdFrom time.Time // start of the streak of intervals meeting the rule
}

var ruleRE = regexp.MustCompile(`^\s*([a-z0-9_.]+)\s*(>=|<=|>|<)\s*([0-9.]+)\s*(ms|s|/s)?\s+for\s+(\S+)\s*$`)

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
	case isPercentile(r.Metric):
		switch unit {
		case "ms", "":
		case "s":
			v *= 1000
		default:
			return Rule{}, fmt.Errorf("autostop %q: latency needs ms or s", s)
		}
	default:
		return Rule{}, fmt.Errorf("autostop %q: unknown metric %q (use errors, errors.CLASS, tps, p50, p90, p95, p99, p999 or max)", s, r.Metric)
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

// value measures the rule's metric on one interval.
func (r *Rule) value(iv *metrics.Interval) float64 {
	secs := iv.Duration().Seconds()
	if secs <= 0 {
		return 0
	}
	total := iv.Total()
	switch {
	case r.Metric == "errors":
		return float64(total.Failed()) / secs
	case r.class != metrics.ClassNone:
		return float64(total.Errors[r.class]) / secs
	case r.Metric == "tps":
		return float64(total.Count) / secs
	}
	st := metrics.Stats(total.Latency)
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

// observe feeds one interval; it reports true once the rule has held for
// its duration over consecutive intervals.
func (r *Rule) observe(iv *metrics.Interval) bool {
	if !r.holds(r.value(iv)) {
		r.holdFrom = time.Time{}
		return false
	}
	if r.holdFrom.IsZero() {
		r.holdFrom = iv.Start
	}
	return iv.End.Sub(r.holdFrom) >= r.For-time.Millisecond
}
