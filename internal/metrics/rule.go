package metrics

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/pgerr"
)

// Rule is one autostop condition: a metric measured over a sliding window
// of the last D of a run, "errors>25/s for 10s" (more than 25 failed
// transactions per second over the last 10 s), "errors.too_many_connections>1/s
// for 5s", "p95>500ms for 10s" (the 95th percentile of the transactions
// that ended in the last 10 s), "tps<10 for 30s", or a sampled series
// ("pg.connections.total>900 for 2s"). The driver watches rules while a
// run goes; a report judges them over stored intervals. Both measure
// through Measure and Holds, so they agree.
type Rule struct {
	Text   string
	Metric string // errors, errors.<class>, tps, p50 p90 p95 p99 p999 max, or a sampled series
	Op     string // > < >= <=
	Value  float64
	For    time.Duration
	// Class is the error class of an errors.<class> rule.
	Class pgerr.ErrorClass
	// Sampled is set for a rule on a sampled series (pg.*, host.*, log.*)
	// rather than on the driver's own measurements.
	Sampled bool
}

var ruleRE = lazy.Value[*regexp.Regexp]{New: buildRuleRE}

func buildRuleRE() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([A-Za-z0-9_.:]+)\s*(>=|<=|>|<)\s*([0-9.]+)\s*(ms|s|/s|%)?\s+for\s+(\S+)\s*$`)
}

// ParseRule parses an autostop rule; the error names the token at fault
// and what is expected.
func ParseRule(s string) (Rule, error) {
	m := ruleRE.Get().FindStringSubmatch(s)
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
			class, known := pgerr.ParseErrorClass(c)
			if !known || class == pgerr.ClassNone {
				return Rule{}, fmt.Errorf("autostop %q: unknown error class %q", s, c)
			}
			r.Class = class
		}
	case r.Metric == "tps":
		if unit != "" && unit != "/s" {
			return Rule{}, fmt.Errorf("autostop %q: tps takes a plain number", s)
		}
	case strings.HasPrefix(r.Metric, "pg.") || strings.HasPrefix(r.Metric, "host.") || strings.HasPrefix(r.Metric, "log."):
		r.Sampled = true // a series of the samplers, in its own unit
	case r.IsPercentile():
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
	d, err := time.ParseDuration(m[5])
	if n, nerr := strconv.ParseFloat(m[5], 64); nerr == nil {
		d, err = time.Duration(n*float64(time.Second)), nil // bare seconds
		if n*float64(time.Second) >= math.MaxInt64 {
			err = fmt.Errorf("out of range") // the conversion is undefined
		}
	}
	if err != nil || d <= 0 {
		return Rule{}, fmt.Errorf("autostop %q: %q is not a duration (10s, 1m)", s, m[5])
	}
	r.For = d
	return r, nil
}

// IsSampled reports whether the rule watches a sampled series.
func (r *Rule) IsSampled() bool { return r.Sampled }

// IsPercentile reports whether the rule's metric is a latency.
func (r *Rule) IsPercentile() bool {
	switch r.Metric {
	case "p50", "p90", "p95", "p99", "p999", "max":
		return true
	}
	return false
}

// Measure is the rule's metric (not for sampled rules) over secs seconds
// whose transactions total merged: a rate, or a latency in ms.
func (r *Rule) Measure(total *TxStats, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	switch {
	case r.Metric == "errors":
		return float64(total.Failed()) / secs
	case r.Class != pgerr.ClassNone:
		return float64(total.Errors[r.Class]) / secs
	case r.Metric == "tps":
		return float64(total.Count) / secs
	}
	if total.Latency == nil {
		return 0
	}
	st := total.LatencyStats()
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

// Holds reports whether v meets the rule.
func (r *Rule) Holds(v float64) bool {
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
