package plan

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// SLO is a service level objective a run must keep: latency percentile
// bounds (latency from the intended start, queueing included) and a
// highest error rate.
type SLO struct {
	Text      string
	Latency   []LatencyBound
	MaxErrors float64 // fraction of transactions that may fail; -1: not bounded
}

// LatencyBound is pNN<DUR.
type LatencyBound struct {
	Name string // p50, p90, p95, p99, p99.9, max
	Max  time.Duration
}

// unstartedShare is the share of due arrivals that may go unstarted at the
// end of a step before the rate counts as not kept (the queue grew).
const unstartedShare = 0.01

// ParseSLO parses "p99<50ms", "p95<20ms,errors<1%" (parts separated by
// commas or " and ").
func ParseSLO(s string) (SLO, error) {
	slo := SLO{Text: s, MaxErrors: -1}
	parts := strings.Split(strings.ReplaceAll(s, " and ", ","), ",")
	for _, part := range parts {
		part = strings.TrimSpace(part)
		name, bound, ok := strings.Cut(part, "<")
		name, bound = strings.TrimSpace(name), strings.TrimSpace(bound)
		if !ok || bound == "" {
			return SLO{}, fmt.Errorf("SLO %q: expected pNN<DURATION or errors<N%% (e.g. 'p99<50ms,errors<1%%')", part)
		}
		if name == "errors" {
			v, err := strconv.ParseFloat(strings.TrimSuffix(bound, "%"), 64)
			if err != nil || !strings.HasSuffix(bound, "%") || v < 0 || v > 100 {
				return SLO{}, fmt.Errorf("SLO %q: the error bound is a percentage, e.g. errors<1%%", part)
			}
			slo.MaxErrors = v / 100
			continue
		}
		if _, ok := percentile(metrics.LatencyStats{}, name); !ok {
			return SLO{}, fmt.Errorf("SLO %q: %q is not p50, p90, p95, p99, p99.9 or max", part, name)
		}
		d, err := time.ParseDuration(bound)
		if err != nil || d <= 0 {
			return SLO{}, fmt.Errorf("SLO %q: %q is not a duration (50ms, 1s)", part, bound)
		}
		slo.Latency = append(slo.Latency, LatencyBound{Name: name, Max: d})
	}
	if len(slo.Latency) == 0 && slo.MaxErrors < 0 {
		return SLO{}, fmt.Errorf("SLO %q bounds nothing", s)
	}
	return slo, nil
}

func percentile(l metrics.LatencyStats, name string) (ms float64, ok bool) {
	switch name {
	case "p50":
		return l.P50, true
	case "p90":
		return l.P90, true
	case "p95":
		return l.P95, true
	case "p99":
		return l.P99, true
	case "p99.9", "p999":
		return l.P999, true
	case "max":
		return l.Max, true
	}
	return 0, false
}

// Holds judges a run's summary: ok, or why not. A run that did not finish
// its length (failed, stopped), that committed nothing, or that left more
// than 1% of its arrivals (and more than one per client) unstarted does
// not hold.
func (s SLO) Holds(sum *metrics.Summary) (ok bool, why string) {
	switch sum.Status {
	case metrics.StatusComplete, metrics.StatusDegraded:
	default:
		return false, "run " + sum.Status + ": " + sum.StopReason
	}
	if sum.Transactions == 0 {
		return false, "no transaction committed"
	}
	due := float64(sum.Transactions + sum.Failed + sum.Unstarted)
	// A few arrivals come due as the run ends (one per client at most):
	// not a sign of a growing queue.
	if float64(sum.Unstarted) > max(unstartedShare*due, float64(sum.Clients)) {
		return false, fmt.Sprintf("%d of %.0f arrivals never started (the queue grew)", sum.Unstarted, due)
	}
	for _, b := range s.Latency {
		ms, _ := percentile(sum.Latency, b.Name)
		if ms > float64(b.Max)/float64(time.Millisecond) {
			return false, fmt.Sprintf("%s %.1fms > %s", b.Name, ms, b.Max)
		}
	}
	if s.MaxErrors >= 0 {
		if rate := float64(sum.Failed) / float64(sum.Transactions+sum.Failed); rate > s.MaxErrors {
			return false, fmt.Sprintf("errors %.2f%% > %g%%", 100*rate, 100*s.MaxErrors)
		}
	}
	return true, ""
}

// Search finds the highest open-loop rate that keeps an SLO over a step
// (a recorded run of the confirmation window's length): rates go up by
// Factor from Start until the SLO breaks (or down until it holds), then
// bisect until the bracket is within Precision.
type Search struct {
	SLO       SLO
	Start     float64 // first rate (tx/s)
	Factor    float64 // coarse step (> 1)
	Max       float64 // highest rate tried (0: no bound)
	Min       float64 // lowest rate tried going down
	Precision float64 // stop when (above-below)/below is at most this
	MaxSteps  int
	Store     *store.Store
	// Step runs one recorded run at the rate; runID "" with an error when
	// nothing was recorded.
	Step  func(ctx context.Context, rate float64) (runID string, err error)
	Notef func(format string, args ...any)
}

// Probe is one step of the search.
type Probe struct {
	Rate  float64 `json:"rate"`
	RunID string  `json:"run_id"`
	Held  bool    `json:"held"`
	Why   string  `json:"why,omitempty"` // why the SLO did not hold
	TPS   float64 `json:"tps"`
}

// SearchResult is the sustainable rate and the runs that bracket it.
type SearchResult struct {
	Rate   float64 `json:"rate"`            // highest rate that held (0: none did)
	Below  *Probe  `json:"below,omitempty"` // the run at Rate
	Above  *Probe  `json:"above,omitempty"` // the lowest rate that did not hold
	Capped bool    `json:"capped"`          // Max held: the limit is higher
	Probes []Probe `json:"probes"`
}

// Run searches. Every step is a recorded run; an error from a step that
// recorded nothing ends the search.
func (s *Search) Run(ctx context.Context) (SearchResult, error) {
	var res SearchResult
	var below, above *Probe
	probe := func(rate float64) (*Probe, error) {
		if len(res.Probes) >= s.MaxSteps {
			return nil, fmt.Errorf("find-max: %d steps without converging", s.MaxSteps)
		}
		p, err := s.probe(ctx, rate)
		if err != nil {
			return nil, err
		}
		res.Probes = append(res.Probes, *p)
		return p, nil
	}
	for rate := s.Start; ; {
		p, err := probe(rate)
		if err != nil {
			return res, err
		}
		if p.Held {
			below = p
			if above != nil || s.Max > 0 && rate >= s.Max {
				res.Capped = above == nil
				break
			}
			rate = roundRate(rate * s.Factor)
			if s.Max > 0 {
				rate = min(rate, s.Max)
			}
			continue
		}
		above = p
		if below != nil {
			break
		}
		if rate = roundRate(rate / s.Factor); rate < s.Min {
			return s.done(res, below, above), nil // nothing held
		}
	}
	for below != nil && above != nil && (above.Rate-below.Rate)/below.Rate > s.Precision {
		mid := roundRate((below.Rate + above.Rate) / 2)
		if mid <= below.Rate || mid >= above.Rate {
			break
		}
		p, err := probe(mid)
		if err != nil {
			return res, err
		}
		if p.Held {
			below = p
		} else {
			above = p
		}
	}
	return s.done(res, below, above), nil
}

func (s *Search) done(res SearchResult, below, above *Probe) SearchResult {
	res.Below, res.Above = below, above
	if below != nil {
		res.Rate = below.Rate
	}
	return res
}

// probe runs one step and judges it.
func (s *Search) probe(ctx context.Context, rate float64) (*Probe, error) {
	if s.Notef != nil {
		s.Notef("find-max: trying %s tx/s", FormatRate(rate))
	}
	id, err := s.Step(ctx, rate)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if id == "" {
		return nil, fmt.Errorf("find-max step at %s tx/s: %w", FormatRate(rate), err)
	}
	run, lerr := s.Store.Load(id)
	if lerr != nil {
		return nil, lerr
	}
	p := &Probe{Rate: rate, RunID: id, TPS: run.Summary.TPS}
	p.Held, p.Why = s.SLO.Holds(&run.Summary)
	if s.Notef != nil {
		verdict := "held"
		if !p.Held {
			verdict = "broken: " + p.Why
		}
		s.Notef("find-max: %s tx/s: run %s, %.1f tps, SLO %s", FormatRate(rate), id, p.TPS, verdict)
	}
	return p, nil
}

// roundRate keeps rates readable: whole numbers from 10 tx/s up, else
// two decimals.
func roundRate(r float64) float64 {
	if r >= 10 {
		return math.Round(r)
	}
	return math.Round(r*100) / 100
}

// FormatRate prints a rate as run -R takes it.
func FormatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }
