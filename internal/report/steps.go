package report

import (
	"math"
	"slices"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// stepCharts draws the sweeps among runs, one point per step: throughput
// against the load asked for (clients, or the target rate of an open-loop
// sweep) and the p95/p99 latency against the throughput reached. Each
// chart has its own x axis. None without a sweep.
func stepCharts(runs []*store.Run, prefix func(int) string, color func(int, int) string) []chart {
	byRate := true
	sweeps := false
	for _, r := range runs {
		for _, st := range r.Summary.Steps {
			sweeps = true
			byRate = byRate && st.Rate > 0
		}
	}
	if !sweeps {
		return nil
	}
	load := func(st *metrics.StepSummary) float64 {
		if byRate {
			return st.Rate
		}
		return float64(st.Clients)
	}
	tp := chart{ID: "steps-throughput", Section: "steps", Title: "Sweep: throughput by clients", Unit: "tx/s",
		XLabel: "clients", Points: true}
	if byRate {
		tp.Title, tp.XLabel = "Sweep: throughput by target rate", "target tx/s"
	}
	lat := chart{ID: "steps-latency", Section: "steps", Title: "Sweep: latency by throughput (one point per step)", Unit: "ms",
		XLabel: "tx/s", Points: true}
	tp.X = stepAxis(runs, load)
	lat.X = stepAxis(runs, func(st *metrics.StepSummary) float64 { return st.TPS })
	for ri, r := range runs {
		if len(r.Summary.Steps) == 0 {
			continue
		}
		tp.Series = append(tp.Series, series{Name: prefix(ri) + "tps", Color: color(ri, 0),
			Values: stepValues(r, tp.X, load, func(st *metrics.StepSummary) float64 { return st.TPS })})
		tps := func(st *metrics.StepSummary) float64 { return st.TPS }
		lat.Series = append(lat.Series,
			series{Name: prefix(ri) + "p95", Color: color(ri, 0), Values: stepValues(r, lat.X, tps, func(st *metrics.StepSummary) float64 { return st.Latency.P95 })},
			series{Name: prefix(ri) + "p99", Color: color(ri, 1), Dash: true, Values: stepValues(r, lat.X, tps, func(st *metrics.StepSummary) float64 { return st.Latency.P99 })})
	}
	return []chart{tp, lat}
}

// stepAxis is the sorted union of x over every step of every run.
func stepAxis(runs []*store.Run, x func(*metrics.StepSummary) float64) nums {
	var xs nums
	for _, r := range runs {
		for i := range r.Summary.Steps {
			if v := x(&r.Summary.Steps[i]); !slices.Contains(xs, v) {
				xs = append(xs, v)
			}
		}
	}
	slices.Sort(xs)
	return xs
}

// stepValues places y of each step of r at its x on axis; no value (null,
// joined over) elsewhere.
func stepValues(r *store.Run, axis nums, x, y func(*metrics.StepSummary) float64) nums {
	v := make(nums, len(axis))
	for i := range v {
		v[i] = math.NaN()
	}
	for i := range r.Summary.Steps {
		st := &r.Summary.Steps[i]
		if k := slices.Index(axis, x(st)); k >= 0 {
			v[k] = y(st)
		}
	}
	return v
}
