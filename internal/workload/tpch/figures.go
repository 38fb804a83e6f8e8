package tpch

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/pgtext"

	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/analytic"
)

// notAudited labels every figure: pgarena's TPC-H is derived from the
// specification, not an audited result (no ACID tests, no pricing, the
// figures of one run).
const notAudited = "TPC-H-derived, not audited"

// Snapshot implements workload.FigureReporter: nothing is read from the
// database (the figures are the queries' times).
func (w *Workload) Snapshot(context.Context, pgtext.Querier) (map[string]float64, error) {
	return map[string]float64{}, nil
}

// Figures implements workload.FigureReporter: power@size
// (Clause 5.4.1), throughput@size (Clause 5.4.2), the geometric mean of
// the query times and queries per hour. A test that did not complete
// (a query failed, -T ended it) gets no power or throughput figure, and a
// note says why.
func (w *Workload) Figures(win workload.FigureWindow) []workload.Figure {
	elapsed, committed, times := win.Elapsed, win.Committed, win.Times
	count := map[string]int64{}
	total := map[string]time.Duration{}
	for name, n := range committed {
		count[analytic.BaseName(name)] += n
	}
	for name, tt := range times {
		total[analytic.BaseName(name)] += tt.Total
	}
	// mean time of each type that ran, in seconds
	mean := func(name string) (float64, bool) {
		if count[name] == 0 || total[name] <= 0 {
			return 0, false
		}
		return total[name].Seconds() / float64(count[name]), true
	}
	var figs []workload.Figure
	var qs []float64
	for _, q := range queryNames.Get() {
		if s, ok := mean(q); ok {
			qs = append(qs, s)
		}
	}
	var done int64
	for _, q := range queryNames.Get() {
		done += count[q]
	}
	figs = append(figs, w.testFigures(elapsed, committed, times)...)
	if g, ok := geomean(qs); ok {
		figs = append(figs, workload.Figure{Name: "query_geomean", Value: round(g, 4), Unit: "s",
			Note: fmt.Sprintf("geometric mean of the mean times of the %d queries that completed; %s", len(qs), notAudited)})
	}
	// the shortest time of each type, beside the summary's median and
	// maximum (--queries --repeat: per-query min/median/max)
	names := slices.Sorted(maps.Keys(times))
	for _, name := range names {
		if committed[name] > 0 {
			figs = append(figs, workload.Figure{Name: "min", Tx: name, Value: round(float64(times[name].Min)/float64(time.Millisecond), 3), Unit: "ms"})
		}
	}
	figs = append(figs, workload.Figure{Name: "queries_per_hour", Value: analytic.QphH(done, elapsed), Unit: "queries/hour",
		Note: fmt.Sprintf("%d queries completed × 3600 / %.1f s (not TPC-H's QphH@size); %s", done, elapsed.Seconds(), notAudited)})
	return figs
}

// testFigures are the power and throughput tests' figures, and QphH@size
// when the run held both. Each test's counts and times are its groups'
// (power; streams and refresh), or the whole run's when it was the only
// test. With both, the throughput test ran after the power test (its
// groups' workload.Part.After), so its length Ts is the run's less the
// power test's, which is the sum of the power stream's times (one client,
// one transaction after the other).
func (w *Workload) testFigures(elapsed time.Duration, committed map[string]int64, times map[string]workload.TxTimes) []workload.Figure {
	both := w.power && w.throughput
	of := func(groups ...string) (map[string]int64, map[string]time.Duration) {
		count, total := map[string]int64{}, map[string]time.Duration{}
		for name, n := range committed {
			g, base, _ := strings.Cut(name, "/")
			if base == "" {
				g, base = "", g
			}
			if !both || slices.Contains(groups, g) {
				count[base] += n
				total[base] += times[name].Total
			}
		}
		return count, total
	}
	var figs []workload.Figure
	var power, throughput float64
	if w.power {
		count, total := of(GroupPower)
		f := w.powerFigure(count, func(name string) (float64, bool) {
			if count[name] == 0 || total[name] <= 0 {
				return 0, false
			}
			return total[name].Seconds() / float64(count[name]), true
		})
		figs, power = append(figs, f), f.Value
		if both {
			var span time.Duration
			for _, d := range total {
				span += d
			}
			elapsed -= span
		}
	}
	if w.throughput {
		count, _ := of(GroupStreams, GroupRefresh)
		f := w.throughputFigure(count, elapsed)
		if both {
			f.Note += "; Ts is the run's length less the power test's (the sum of its times)"
		}
		figs, throughput = append(figs, f), f.Value
	}
	if both && power > 0 && throughput > 0 {
		figs = append(figs, workload.Figure{Name: "qphh_at_size", Value: round(math.Sqrt(power*throughput), 1), Unit: "queries/hour × SF",
			Note: fmt.Sprintf("√(power@size × throughput@size), Clause 5.4.3; %s", notAudited)})
	}
	return figs
}

// powerFigure is power@size = 3600 · SF / geometric mean of the 22
// queries' and the two refresh functions' times in seconds (Clause
// 5.4.1), when each ran once.
func (w *Workload) powerFigure(count map[string]int64, mean func(string) (float64, bool)) workload.Figure {
	f := workload.Figure{Name: "power_at_size", Unit: "queries/hour × SF"}
	var ts []float64
	for _, name := range append(queryNames.Get(), "rf1", "rf2") {
		s, ok := mean(name)
		if !ok || count[name] != 1 {
			f.Note = fmt.Sprintf("not computed: %s completed %d times, not once (a failure, or the run ended early); %s", name, count[name], notAudited)
			return f
		}
		ts = append(ts, s)
	}
	// Clause 5.4.1.4: times below a thousandth of the longest count as
	// that thousandth.
	floor := slices.Max(ts) / 1000
	for i := range ts {
		ts[i] = max(ts[i], floor)
	}
	g, _ := geomean(ts)
	f.Value = round(3600*w.scale/g, 1)
	f.Note = fmt.Sprintf("3600 × SF %g / geometric mean of the 22 queries' and RF1's and RF2's times (%.4f s; times under a thousandth of the longest raised to it), Clause 5.4.1; %s", w.scale, g, notAudited)
	return f
}

// throughputFigure is throughput@size = S · 22 · 3600 · SF / Ts, Ts the
// test's length in seconds (Clause 5.4.2), when every stream completed.
func (w *Workload) throughputFigure(count map[string]int64, elapsed time.Duration) workload.Figure {
	f := workload.Figure{Name: "throughput_at_size", Unit: "queries/hour × SF"}
	s := int64(w.streams)
	for _, name := range append(queryNames.Get(), "rf1", "rf2") {
		if count[name] != s {
			f.Note = fmt.Sprintf("not computed: %s completed %d times, not %d (a failure, or the run ended early); %s", name, count[name], s, notAudited)
			return f
		}
	}
	if elapsed <= 0 {
		f.Note = "not computed: no measured time"
		return f
	}
	f.Value = round(float64(s)*22*3600*w.scale/elapsed.Seconds(), 1)
	f.Note = fmt.Sprintf("%d streams × 22 × 3600 × SF %g / Ts %.1f s, Clause 5.4.2; %s",
		s, w.scale, elapsed.Seconds(), notAudited)
	return f
}

// geomean is the geometric mean of positive values.
func geomean(v []float64) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var sum float64
	for _, x := range v {
		if x <= 0 {
			return 0, false
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(v))), true
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
