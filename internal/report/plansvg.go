package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// svgChart is one chart of the plan report, drawn as inline SVG (no
// script): coordinates are computed here, labels escaped by the template.
type svgChart struct {
	Title, XLabel, YLabel string
	Width, Height         int
	Series                []svgSeries
	XTicks, YTicks        []svgTick
}

type svgSeries struct {
	Name, Color string
	Points      string // polyline points "x,y x,y"
	Dots        []svgDot
}

type svgDot struct {
	X, Y  float64
	Title string
}

type svgTick struct {
	Pos   float64
	Label string
}

var planColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

const (
	svgW, svgH                   = 720, 360
	padL, padR, padT, padB       = 70.0, 20.0, 20.0, 50.0
	plotW, plotH                 = svgW - padL - padR, svgH - padT - padB
	preferredAxis1, preferredAx2 = "clients", "rate"
)

// chartAxis picks the x axis: clients, else rate, else the first axis
// whose values are all numbers; -1 when none is.
func chartAxis(d *PlanData) int {
	numeric := func(i int) bool {
		for _, r := range d.Rows {
			if _, err := strconv.ParseFloat(r.Axes[i], 64); err != nil {
				return false
			}
		}
		return true
	}
	for _, want := range []string{preferredAxis1, preferredAx2} {
		if i := slices.Index(d.Axes, want); i >= 0 && numeric(i) {
			return i
		}
	}
	for i := range d.Axes {
		if numeric(i) && d.Axes[i] != "target" && d.Axes[i] != "workload" {
			return i
		}
	}
	return -1
}

// planCharts draws, per workload, the metric's mean over repeats against
// the x axis, one line per target and combination of the other axes.
func planCharts(d *PlanData, cells []planCell, metric string) []svgChart {
	xi := chartAxis(d)
	if xi < 0 {
		return nil
	}
	var charts []svgChart
	var workloads []string
	for _, c := range cells {
		if !slices.Contains(workloads, c.Workload) {
			workloads = append(workloads, c.Workload)
		}
	}
	for _, wl := range workloads {
		lines := map[string][][2]float64{}
		var names []string
		for _, c := range cells {
			e := c.TPS
			if metric != "tps" {
				e = c.Figure
			}
			if c.Workload != wl || e.N == 0 {
				continue
			}
			x, _ := strconv.ParseFloat(c.Axes[xi], 64)
			name := seriesName(d, c, xi)
			if _, ok := lines[name]; !ok {
				names = append(names, name)
			}
			lines[name] = append(lines[name], [2]float64{x, e.Mean})
		}
		if len(names) > 0 {
			charts = append(charts, drawChart(wl+": "+metric+" vs "+d.Axes[xi], d.Axes[xi], metric, names, lines))
		}
	}
	return charts
}

// seriesName is the target and the values of the axes other than x.
func seriesName(d *PlanData, c planCell, xi int) string {
	parts := []string{c.Target}
	for i, a := range d.Axes {
		if i != xi && a != "target" && a != "workload" {
			parts = append(parts, a+"="+c.Axes[i])
		}
	}
	return strings.Join(parts, " ")
}

func drawChart(title, xl, yl string, names []string, lines map[string][][2]float64) svgChart {
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, pts := range lines {
		for _, p := range pts {
			xmin, xmax, ymax = min(xmin, p[0]), max(xmax, p[0]), max(ymax, p[1])
		}
	}
	if xmax == xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	if ymax <= 0 {
		ymax = 1
	}
	ymax = niceCeil(ymax)
	sx := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*plotW }
	sy := func(y float64) float64 { return padT + plotH - y/ymax*plotH }
	ch := svgChart{Title: title, XLabel: xl, YLabel: yl, Width: svgW, Height: svgH}
	xs := map[float64]bool{}
	for i, n := range names {
		pts := lines[n]
		slices.SortFunc(pts, func(a, b [2]float64) int { return int(math.Copysign(1, a[0]-b[0])) })
		s := svgSeries{Name: n, Color: planColors[i%len(planColors)]}
		var ps []string
		for _, p := range pts {
			ps = append(ps, fmt.Sprintf("%.1f,%.1f", sx(p[0]), sy(p[1])))
			s.Dots = append(s.Dots, svgDot{X: sx(p[0]), Y: sy(p[1]), Title: fmt.Sprintf("%s: %s=%g, %s %.1f", n, xl, p[0], yl, p[1])})
			xs[p[0]] = true
		}
		s.Points = strings.Join(ps, " ")
		ch.Series = append(ch.Series, s)
	}
	for x := range xs {
		ch.XTicks = append(ch.XTicks, svgTick{Pos: sx(x), Label: strconv.FormatFloat(x, 'g', -1, 64)})
	}
	slices.SortFunc(ch.XTicks, func(a, b svgTick) int { return int(math.Copysign(1, a.Pos-b.Pos)) })
	for i := 0; i <= 4; i++ {
		y := ymax * float64(i) / 4
		ch.YTicks = append(ch.YTicks, svgTick{Pos: sy(y), Label: strconv.FormatFloat(y, 'g', 4, 64)})
	}
	return ch
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
