package driver

import (
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
)

// Rule is an autostop rule (metrics.Rule) as the driver watches it during
// a run: the intervals of its window, or the streak of a sampled series.
// The rule is checked once the run has D of intervals; when it holds the
// run stops cleanly and the rule is the stop reason. A window smooths
// bursts: errors that come in waves (clients retrying with backoff) still
// count at their average rate.
type Rule struct {
	metrics.Rule

	window []windowed // the intervals of the last For, oldest first
	// Sampled metrics hold when every reading over For meets the rule:
	// holdFrom starts the streak.
	holdFrom time.Time
}

// ParseRule parses an autostop rule (see metrics.ParseRule).
func ParseRule(s string) (Rule, error) {
	r, err := metrics.ParseRule(s)
	return Rule{Rule: r}, err
}

// Sampled reads the latest value of a sampled series (pg.*, host.*,
// log.*) for autostop rules; ok is false while it has no value.
type Sampled func(name string) (v float64, ok bool)

// windowed is what a rule keeps of one interval.
type windowed struct {
	start, end time.Time
	stats      metrics.TxStats // all transaction types merged
}

// value measures the rule's metric over the window.
func (r *Rule) value() float64 {
	var secs float64
	total := metrics.TxStats{}
	if r.IsPercentile() {
		total.Latency = metrics.NewHistogram()
	}
	for i := range r.window {
		w := &r.window[i]
		secs += w.end.Sub(w.start).Seconds()
		total.Count += w.stats.Count
		total.Errors.Add(&w.stats.Errors)
		if total.Latency != nil {
			metrics.MergeHistogram(total.Latency, w.stats.Latency)
		}
	}
	return r.Measure(&total, secs)
}

// observeSampled checks a sampled series at the end of an interval.
func (r *Rule) observeSampled(iv *metrics.Interval, sampled Sampled) bool {
	v, ok := 0.0, false
	if sampled != nil {
		v, ok = sampled(r.Metric)
	}
	if !ok || !r.Holds(v) {
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
	if !r.IsPercentile() {
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
	return r.Holds(r.value())
}
