package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/sampled"
	"github.com/pgarena/pgarena/internal/store"
)

// chartSet is the data of every chart of a report, on one time axis:
// seconds since each run's first interval began, so that runs overlay.
type chartSet struct {
	X      nums    `json:"x"`
	Charts []chart `json:"charts"`
	Warmup []band  `json:"warmup"` // shaded on every chart
	// Events are a failover's moments, a line on every chart over time.
	Events []failoverEvent `json:"events"`
	Runs   []runMeta       `json:"runs"`
	Note   string          `json:"-"` // how points were consolidated, if they were
}

type runMeta struct {
	Name  string `json:"name"`
	Color string `json:"color"`
}

type band struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
	Run  int     `json:"run"`
}

// chart is one uPlot chart: series over chartSet.X.
type chart struct {
	ID      string   `json:"id"`
	Section string   `json:"section"`
	Anchor  string   `json:"-"` // the section's id, on its first chart
	Title   string   `json:"title"`
	Unit    string   `json:"unit"`
	Series  []series `json:"series"`
	// X, when set, is the chart's own x axis (not time: the sweep charts),
	// labelled XLabel, with points drawn.
	X      nums   `json:"x,omitempty"`
	XLabel string `json:"xlabel,omitempty"`
	Points bool   `json:"points,omitempty"`
}

type series struct {
	Name   string `json:"name"`
	Color  string `json:"color"`
	Dash   bool   `json:"dash,omitempty"`
	Values nums   `json:"values"`
	agg    string // how points consolidate
}

// gap marks a point of a run where there is no data (an interval without
// transactions for a latency, a stretch without samples, time with no
// intervals): lines break there. NaN is different: no point at this x (it
// is another run's time), and lines join over it.
func gap() float64 { return math.Inf(-1) }

func isGap(v float64) bool { return math.IsInf(v, -1) }

// nums encodes as a JSON array with null for NaN (no value at this x) and
// "gap" for gap, compactly.
type nums []float64

func (n nums) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 8*len(n)+2)
	b = append(b, '[')
	for i, v := range n {
		if i > 0 {
			b = append(b, ',')
		}
		if isGap(v) {
			b = append(b, `"gap"`...)
		} else if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, v, 'g', 6, 64)
		}
	}
	return append(b, ']'), nil
}

// timeline maps each run's intervals onto the shared x axis.
type timeline struct {
	x    []float64
	runX [][]float64 // runX[run][interval] = its x
	idx  [][]int     // idx[run][interval] = position in x
	gaps [][]int     // gaps[run] = positions in x inside a stretch of that run without intervals
}

// gapFactor: consecutive points of a run further apart than this many
// ticks (or sample intervals) have a gap between them.
const gapFactor = 2

// runGaps returns an x inside each stretch longer than gapFactor ticks
// between consecutive points xs of a run.
func runGaps(xs []float64, tick float64) []float64 {
	var out []float64
	for i := 1; i < len(xs); i++ {
		if xs[i]-xs[i-1] > gapFactor*tick {
			out = append(out, math.Round((xs[i-1]+tick)*1000)/1000)
		}
	}
	return out
}

func tickOf(r *store.Run) float64 {
	if r.Spec.TickS > 0 {
		return r.Spec.TickS
	}
	return 1
}

// runXs places each interval of r at the time its end is due: seconds since
// the run's start, snapped to the tick so that runs overlay point for point
// (ticks fire a little late); a short last interval keeps its own time.
func runXs(r *store.Run) []float64 {
	tick := tickOf(r)
	xs := make([]float64, len(r.Intervals))
	prev := math.Inf(-1)
	for i := range r.Intervals {
		e := r.Intervals[i].End.Sub(r.Intervals[0].Start).Seconds()
		x := math.Round(e/tick) * tick
		if x <= prev || math.Abs(x-e) > tick/4 {
			x = math.Round(e*1000) / 1000
		}
		xs[i], prev = x, x
	}
	return xs
}

func newTimeline(runs []*store.Run) *timeline {
	seen := map[float64]bool{}
	var xs []float64
	perRun := make([][]float64, len(runs))
	gapXs := make([][]float64, len(runs))
	for ri, r := range runs {
		perRun[ri] = runXs(r)
		gapXs[ri] = runGaps(perRun[ri], tickOf(r))
		for _, x := range slices.Concat(perRun[ri], gapXs[ri]) {
			if !seen[x] {
				seen[x] = true
				xs = append(xs, x)
			}
		}
	}
	slices.Sort(xs)
	pos := make(map[float64]int, len(xs))
	for i, x := range xs {
		pos[x] = i
	}
	t := &timeline{x: xs, runX: perRun, idx: make([][]int, len(runs)), gaps: make([][]int, len(runs))}
	for ri := range runs {
		t.idx[ri] = make([]int, len(perRun[ri]))
		for i, x := range perRun[ri] {
			t.idx[ri][i] = pos[x]
		}
		for _, x := range gapXs[ri] {
			t.gaps[ri] = append(t.gaps[ri], pos[x])
		}
	}
	return t
}

// empty returns a series of run ri with no value at other runs' x and a
// gap wherever run ri has no interval.
func (t *timeline) empty(ri int) nums {
	v := make(nums, len(t.x))
	for i := range v {
		v[i] = math.NaN()
	}
	for _, k := range t.gaps[ri] {
		v[k] = gap()
	}
	return v
}

// values fills a series of run ri from f applied to each of its intervals;
// an interval for which f has no value (NaN) is a gap.
func (t *timeline) values(r *store.Run, ri int, f func(iv *metrics.Interval) float64) nums {
	v := t.empty(ri)
	for i := range r.Intervals {
		y := f(&r.Intervals[i])
		if math.IsNaN(y) {
			y = gap()
		}
		v[t.idx[ri][i]] = y
	}
	return v
}

// rate is n per second of iv, or NaN (no point: a gap) for an interval
// shorter than half a tick: the last interval of a run or step is cut short
// by its end, and 64 transactions in 0.053 s would draw as 1,200 tx/s. Its
// transactions still count in every summary.
func rate(n int64, iv *metrics.Interval, tick float64) float64 {
	d := iv.Duration().Seconds()
	if d <= 0 || d < tick/2 {
		return math.NaN()
	}
	return float64(n) / d
}

// txNames is the union of the runs' transaction types, in first-seen order.
func txNames(runs []*store.Run) []string {
	var names []string
	for _, r := range runs {
		for _, iv := range r.Intervals {
			for _, t := range iv.Tx {
				if !slices.Contains(names, t.Name) {
					names = append(names, t.Name)
				}
			}
		}
	}
	return names
}

func txByName(iv *metrics.Interval, name string) *metrics.TxStats {
	for i := range iv.Tx {
		if iv.Tx[i].Name == name {
			return &iv.Tx[i]
		}
	}
	return nil
}

// maxPoints bounds the points of a series: a longer run (a 24-hour run at
// 1 s ticks) is drawn from consolidated points, each covering several
// intervals: throughput averages, failures add up, connected clients take
// the minimum (an outage stays visible) and latency percentiles take the
// highest per-interval value. This keeps a report small and quick to open.
const maxPoints = 1500

// consolidate reduces cs to at most maxPoints points and returns how many
// intervals each point covers.
func consolidate(cs *chartSet) int {
	n := len(cs.X)
	if n <= maxPoints {
		return 1
	}
	per := (n + maxPoints - 1) / maxPoints
	groups := (n + per - 1) / per
	x := make(nums, groups)
	for g := range groups {
		x[g] = cs.X[min((g+1)*per, n)-1]
	}
	for ci := range cs.Charts {
		if cs.Charts[ci].X != nil {
			continue // its own axis, a point per step
		}
		for si := range cs.Charts[ci].Series {
			s := &cs.Charts[ci].Series[si]
			v := make(nums, groups)
			for g := range groups {
				v[g] = aggregate(s.agg, s.Values[g*per:min((g+1)*per, n)])
			}
			s.Values = v
		}
	}
	cs.X = x
	return per
}

func aggregate(how string, vs []float64) float64 {
	out, k := math.NaN(), 0
	for _, v := range vs {
		if isGap(v) {
			if k == 0 {
				out = gap() // stays a gap unless a value follows
			}
			continue
		}
		if math.IsNaN(v) {
			continue
		}
		switch {
		case k == 0:
			out = v
		case how == aggMax:
			out = max(out, v)
		case how == aggMin:
			out = min(out, v)
		default: // sum, mean
			out += v
		}
		k++
	}
	if how == aggMean && k > 0 {
		out /= float64(k)
	}
	return out
}

// How a series consolidates.
const (
	aggMean = ""
	aggSum  = "sum"
	aggMax  = "max"
	aggMin  = "min"
)

// buildCharts makes the report's charts. Each chart is a small function of
// the runs: a new series (server or host samples) is one more chart here and
// nothing in report.js.
func buildCharts(runs []*store.Run, names []string) chartSet {
	t := newTimeline(runs)
	cs := chartSet{X: t.x}
	for i, r := range runs {
		cs.Runs = append(cs.Runs, runMeta{Name: names[i], Color: palette[i%len(palette)]})
		var from, to float64
		inWarmup := false
		for j := range r.Intervals {
			iv := &r.Intervals[j]
			if iv.Warmup {
				if !inWarmup {
					from, inWarmup = 0, true
					if j > 0 {
						from = t.runX[i][j-1]
					}
				}
				to = t.runX[i][j]
			} else if inWarmup {
				cs.Warmup = append(cs.Warmup, band{From: from, To: to, Run: i})
				inWarmup = false
			}
		}
		if inWarmup {
			cs.Warmup = append(cs.Warmup, band{From: from, To: to, Run: i})
		}
	}
	single := len(runs) == 1
	color := func(ri, k int) string {
		if single {
			return palette[k%len(palette)]
		}
		return palette[ri%len(palette)]
	}
	prefix := func(ri int) string {
		if single {
			return ""
		}
		return names[ri] + " "
	}

	// Throughput.
	tp := chart{ID: "throughput", Section: "throughput", Title: "Throughput (committed transactions per second)", Unit: "tx/s"}
	for ri, r := range runs {
		tp.Series = append(tp.Series, series{Name: prefix(ri) + "tps", Color: color(ri, 0), Values: t.values(r, ri, func(iv *metrics.Interval) float64 {
			var n int64
			for _, x := range iv.Tx {
				n += x.Count
			}
			return rate(n, iv, tickOf(r))
		})})
		if slices.ContainsFunc(r.Intervals, func(iv metrics.Interval) bool { return iv.TargetRate > 0 }) {
			tp.Series = append(tp.Series, series{Name: prefix(ri) + "target rate", Color: color(ri, 1), Dash: true,
				Values: t.values(r, ri, func(iv *metrics.Interval) float64 { return iv.TargetRate })})
		}
	}
	cs.Charts = append(cs.Charts, tp)

	// Latency percentiles per transaction type (and all together when
	// there are several types).
	txs := txNames(runs)
	type latChart struct {
		id, title string
		hist      func(iv *metrics.Interval) *hdr.Histogram
	}
	var lcs []latChart
	for k, name := range txs {
		lcs = append(lcs, latChart{"latency-" + strconv.Itoa(k), name, func(iv *metrics.Interval) *hdr.Histogram {
			if t := txByName(iv, name); t != nil {
				return t.Latency
			}
			return nil
		}})
	}
	pctNames, pcts := []string{"p50", "p95", "p99", "max"}, []float64{50, 95, 99, 100}
	if !single {
		// p95 and p99 per run keep an overlay readable.
		pctNames, pcts = pctNames[1:3], pcts[1:3]
	}
	// Each chart is independent work (a long run has millions of
	// percentiles to find): one goroutine per chart.
	latency := make([]chart, len(lcs))
	var wg sync.WaitGroup
	for li, lc := range lcs {
		wg.Go(func() {
			c := chart{ID: lc.id, Section: "latency", Title: "Latency: " + lc.title, Unit: "ms"}
			for ri, r := range runs {
				vs := make([]nums, len(pcts))
				for k := range vs {
					vs[k] = t.empty(ri)
				}
				for j := range r.Intervals {
					h := lc.hist(&r.Intervals[j])
					if h == nil || h.TotalCount() == 0 {
						for k := range vs {
							vs[k][t.idx[ri][j]] = gap() // no commit, no latency
						}
						continue
					}
					// One pass over the histogram for all percentiles; 100
					// is the maximum.
					for k, us := range h.ValueAtPercentilesSlice(pcts) {
						vs[k][t.idx[ri][j]] = float64(us) / 1000
					}
				}
				for k, name := range pctNames {
					c.Series = append(c.Series, series{Name: prefix(ri) + name, Color: color(ri, k), Dash: !single && k > 0, Values: vs[k], agg: aggMax})
				}
			}
			latency[li] = c
		})
	}
	wg.Wait()
	cs.Charts = append(cs.Charts, latency...)

	// Errors per interval by class (a single run), or failed per run.
	ec := chart{ID: "errors", Section: "errors", Title: "Failed transactions per interval", Unit: "failed"}
	for ri, r := range runs {
		if single {
			var total metrics.ErrorCounts
			for _, iv := range r.Intervals {
				for _, x := range iv.Tx {
					total.Add(&x.Errors)
				}
			}
			k := 0
			for c := 1; c < pgerr.NumClasses; c++ {
				if total[c] == 0 {
					continue
				}
				ec.Series = append(ec.Series, series{Name: pgerr.ErrorClass(c).String(), Color: color(ri, k), agg: aggSum,
					Values: t.values(r, ri, func(iv *metrics.Interval) float64 {
						var n int64
						for _, x := range iv.Tx {
							n += x.Errors[c]
						}
						return float64(n)
					})})
				k++
			}
			if k > 0 {
				continue
			}
		}
		ec.Series = append(ec.Series, series{Name: prefix(ri) + "failed", Color: color(ri, 0), agg: aggSum, Values: t.values(r, ri, func(iv *metrics.Interval) float64 {
			var n int64
			for _, x := range iv.Tx {
				n += x.Failed()
			}
			return float64(n)
		})})
	}
	cs.Charts = append(cs.Charts, ec)

	// Connected clients: an outage shows as a drop.
	cc := chart{ID: "connections", Section: "connections", Title: "Connected clients", Unit: "clients"}
	for ri, r := range runs {
		cc.Series = append(cc.Series, series{Name: prefix(ri) + "connected", Color: color(ri, 0), agg: aggMin,
			Values: t.values(r, ri, func(iv *metrics.Interval) float64 { return float64(iv.Connected) })})
	}
	cs.Charts = append(cs.Charts, cc)
	cs.Charts = append(cs.Charts, sampleCharts(runs, t, prefix, color)...)
	cs.Charts = append(cs.Charts, stepCharts(runs, prefix, color)...)
	if per := consolidate(&cs); per > 1 {
		cs.Note = fmt.Sprintf("Each point covers %d intervals: throughput is their mean, failures their sum, "+
			"connected clients their minimum, latency percentiles the highest of the intervals' values.", per)
	}
	for i := range cs.Charts {
		if i == 0 || cs.Charts[i].Section != cs.Charts[i-1].Section {
			cs.Charts[i].Anchor = cs.Charts[i].Section
		}
	}
	return cs
}

// sampleChart is a chart of sampled series (server and host), drawn when a
// run has them. A new panel is one more entry here.
type sampleChart struct {
	id, section, title, unit string
	scale                    float64  // multiply values (bytes to MB)
	series                   []string // exact names, or a prefix ending in "*" (top 6 by peak)
	// An id with "%s" makes one chart per Citus worker, "%s" in id, title
	// and series standing for the worker's word in the series names
	// (citus.<word>.*); its series are labelled without citus.<word>.
}

var sampleCharts_ = []sampleChart{
	{"server-commits", "server", "Server: commits and rollbacks per second (pg_stat_database)", "tx/s", 1,
		[]string{sampled.XactCommitPerS, sampled.XactRollbackPerS}},
	{"server-connections", "server", "Server: connections (pg_stat_activity)", "sessions", 1,
		[]string{sampled.ConnectionsTotal, sampled.Active, sampled.LocksWaiting}},
	{"citus-worker-commits", "server", "Citus workers: commits per second (each worker's pg_stat_database)", "tx/s", 1, []string{sampled.Citus + "*" + sampled.CitusXactCommitPerS}},
	{"citus-worker-rows", "server", "Citus workers: rows read per second", "rows/s", 1, []string{sampled.Citus + "*" + sampled.CitusRowsReadPerS}},
	{"citus-worker-wal", "server", "Citus workers: WAL written", "MB/s", 1.0 / (1 << 20), []string{sampled.Citus + "*" + sampled.CitusWALBytesPerS}},
	{"citus-connections", "server", "Citus: client and internal connections per node", "sessions", 1,
		[]string{sampled.Citus + "*" + sampled.CitusConnectionsClient, sampled.Citus + "*" + sampled.CitusConnectionsInternal, sampled.ConnectionsCitusInternal}},
	{"server-waits", "server", "Server: top wait events (active sessions)", "sessions", 1, []string{sampled.Wait + "*"}},
	{"citus-worker-waits-%s", "server", "Citus worker %s: top wait events (active sessions, Citus's internal ones included)", "sessions", 1,
		[]string{sampled.Citus + "%s." + sampled.CitusWait + "*"}},
	{"citus-worker-cpu", "server", "Citus workers: CPU of each worker's postgres processes (on this host)", "cores", 1, []string{sampled.Citus + "*" + sampled.CitusCPUCores}},
	{"server-wal", "server", "Server: WAL written", "MB/s", 1.0 / (1 << 20), []string{sampled.WALBytesPerS}},
	{"replication-lag", "server", "Replication: lag by pgarena's heartbeat", "s", 1, []string{sampled.Replica + "*" + sampled.LagS}},
	{"replication-bytes", "server", "Replication: replay lag (pg_stat_replication)", "MB", 1.0 / (1 << 20), []string{sampled.Replication + "*" + sampled.LagBytes}},
	{"pooler-clients", "pooler", "Pooler: clients served and waiting (pgbouncer SHOW POOLS, haproxy show stat)", "clients", 1,
		[]string{sampled.PoolerClActive, sampled.PoolerClWaiting, sampled.PoolerScur, sampled.PoolerQcur}},
	{"pooler-servers", "pooler", "Pooler: server connections (pgbouncer SHOW POOLS, pgpool SHOW POOL_PROCESSES)", "connections", 1,
		[]string{sampled.PoolerSvActive, sampled.PoolerSvIdle, sampled.PoolerSvUsed, sampled.PoolerSvLogin, sampled.PoolerProcessesBy + "*"}},
	{"pooler-wait", "pooler", "Pooler: longest wait for a server connection (maxwait)", "ms", 1000, []string{sampled.PoolerMaxwaitS}},
	{"pooler-rate", "pooler", "Pooler: transactions and queries per second (pgbouncer SHOW STATS), sessions per second (haproxy)", "per s", 1,
		[]string{sampled.PoolerXactPerS, sampled.PoolerQueryPerS, sampled.PoolerSessionsPerS}},
	{"host-cpu", "host", "Host: CPU", "%", 1,
		[]string{sampled.CPUUserPct, sampled.CPUSysPct, sampled.CPUIOWaitPct, sampled.CPUStealPct, sampled.PgarenaCPUPct}},
	{"host-disk", "host", "Host: disk utilisation", "%util", 1, []string{sampled.Disk + "*" + sampled.DiskUtilPct}},
}

// sampleCharts draws the sampled series at interval resolution: each
// interval shows the last sample taken at or before its end.
func sampleCharts(runs []*store.Run, t *timeline, prefix func(int) string, color func(int, int) string) []chart {
	var out []chart
	for _, sc := range perWorkerCharts(runs, sampleCharts_) {
		c := chart{ID: sc.id, Section: sc.section, Title: sc.title, Unit: sc.unit}
		for ri, r := range runs {
			if len(r.Samples) == 0 {
				continue
			}
			for k, name := range expandSeries(r, sc.series) {
				pts := r.Series(name)
				if len(pts) == 0 {
					continue
				}
				at := make(map[int64]float64, len(r.Intervals))
				// A sample older than gapFactor sample intervals is stale:
				// no sample came (the server was down), so no value, not
				// the last one drawn flat across the outage.
				fresh := time.Duration(gapFactor * float64(sampleSpacing(pts)))
				p := 0
				for j := range r.Intervals {
					end := r.Intervals[j].End
					for p < len(pts) && !pts[p].Time.After(end) {
						p++
					}
					if p > 0 && (fresh <= 0 || end.Sub(pts[p-1].Time) <= fresh) {
						at[end.UnixNano()] = pts[p-1].Value * sc.scale
					}
				}
				label := strings.TrimPrefix(strings.TrimPrefix(name, sampled.Server), sampled.Host)
				if sc.trim != "" {
					label = strings.TrimPrefix(name, sc.trim)
				}
				c.Series = append(c.Series, series{Name: prefix(ri) + label, Color: color(ri, k),
					Values: t.values(r, ri, func(iv *metrics.Interval) float64 {
						if v, ok := at[iv.End.UnixNano()]; ok {
							return v
						}
						return math.NaN()
					})})
			}
		}
		if len(c.Series) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// drawnChart is a sampleChart for one run set; trim, if set, is cut from
// its series' names for their labels.
type drawnChart struct {
	sampleChart
	trim string
}

// perWorkerCharts expands the per-worker entries of scs into one chart for
// each Citus worker that any of runs sampled, in name order.
func perWorkerCharts(runs []*store.Run, scs []sampleChart) []drawnChart {
	var workers []string
	for _, r := range runs {
		for _, n := range r.SeriesNames() {
			if rest, ok := strings.CutPrefix(n, sampled.Citus); ok {
				if w, _, ok := strings.Cut(rest, "."); ok && !slices.Contains(workers, w) {
					workers = append(workers, w)
				}
			}
		}
	}
	slices.Sort(workers)
	var out []drawnChart
	for _, sc := range scs {
		if !strings.Contains(sc.id, "%s") {
			out = append(out, drawnChart{sampleChart: sc})
			continue
		}
		for _, w := range workers {
			c := drawnChart{sampleChart: sc, trim: sampled.Citus + w + "."}
			c.id, c.title = fmt.Sprintf(sc.id, w), fmt.Sprintf(sc.title, w)
			c.series = nil
			for _, n := range sc.series {
				c.series = append(c.series, fmt.Sprintf(n, w))
			}
			out = append(out, c)
		}
	}
	return out
}

// sampleSpacing is the usual time between consecutive samples of a series
// (the median spacing); 0 with fewer than two samples.
func sampleSpacing(pts []store.Point) time.Duration {
	if len(pts) < 2 {
		return 0
	}
	d := make([]time.Duration, len(pts)-1)
	for i := 1; i < len(pts); i++ {
		d[i-1] = pts[i].Time.Sub(pts[i-1].Time)
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// expandSeries resolves the chart's names for one run: "pg.wait.*" is the
// six series of that prefix with the highest peak.
func expandSeries(r *store.Run, names []string) []string {
	var out []string
	all := r.SeriesNames()
	for _, n := range names {
		pre, suf, wild := strings.Cut(n, "*")
		if !wild {
			out = append(out, n)
			continue
		}
		type peak struct {
			name string
			max  float64
		}
		var ps []peak
		for _, a := range all {
			if strings.HasPrefix(a, pre) && strings.HasSuffix(a, suf) && !strings.HasSuffix(a, ".wait.other") {
				m := 0.0
				for _, pt := range r.Series(a) {
					m = max(m, pt.Value)
				}
				ps = append(ps, peak{a, m})
			}
		}
		slices.SortFunc(ps, func(a, b peak) int {
			if a.max != b.max {
				if a.max > b.max {
					return -1
				}
				return 1
			}
			return strings.Compare(a.name, b.name)
		})
		for i := 0; i < len(ps) && i < 6; i++ {
			out = append(out, ps[i].name)
		}
	}
	return out
}
