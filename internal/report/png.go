package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/pgarena/pgarena/internal/store"
)

// PNG chart size: 1200×600 pixels, a common width for a blog post's column
// at double density.
const (
	PNGWidth, PNGHeight = 1200, 600
	pngDPI              = 96
)

// PNGChart is one chart rendered as a PNG image.
type PNGChart struct {
	Name string // file name, e.g. "throughput.png"
	Data []byte
}

// PNGs renders the report's main charts as PNG images: throughput and
// latency percentiles over time (several runs overlaid), and for several
// runs a bar chart of throughput.
func PNGs(runs []*store.Run) ([]PNGChart, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: no runs")
	}
	names := runNames(runs)
	cs := buildCharts(runs, names)
	var out []PNGChart
	for _, c := range cs.Charts {
		// Throughput, and latency of the first transaction type (the
		// headline one: tpcb-like, new_order).
		if c.ID != "throughput" && c.ID != "latency-0" {
			continue
		}
		p := linePlot(cs.X, c)
		name := c.ID + ".png"
		if c.ID == "latency-0" {
			name = "latency.png"
		}
		b, err := renderPNG(p)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", name, err)
		}
		out = append(out, PNGChart{Name: name, Data: b})
	}
	if len(runs) > 1 {
		p, err := tpsBars(runs, names)
		if err != nil {
			return nil, err
		}
		b, err := renderPNG(p)
		if err != nil {
			return nil, fmt.Errorf("chart tps-bars.png: %w", err)
		}
		out = append(out, PNGChart{Name: "tps-bars.png", Data: b})
	}
	return out, nil
}

func parseColor(hex string) color.Color {
	v, err := strconv.ParseUint(hex[1:], 16, 32)
	if err != nil || len(hex) != 7 {
		return color.Black
	}
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(16)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = false
	return p
}

func linePlot(x nums, c chart) *plot.Plot {
	p := newPlot(c.Title, "elapsed s", c.Unit)
	ymax := 0.0
	for _, s := range c.Series {
		var first *plotter.Line
		for _, xys := range segments(x, s.Values) {
			ymax = max(ymax, maxY(xys))
			l, err := plotter.NewLine(xys)
			if err != nil {
				continue
			}
			l.Color = parseColor(s.Color)
			l.Width = vg.Points(1.5)
			if s.Dash {
				l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
			}
			p.Add(l)
			if first == nil {
				first = l
				p.Legend.Add(s.Name, l)
			}
		}
	}
	// Headroom for the legend, one line per series.
	p.Y.Max = max(ymax, 1) * (1.1 + 0.06*float64(len(c.Series)))
	return p
}

// segments splits a series into the runs of points between its gaps (a
// line breaks at a gap); points without a value (NaN) are joined over.
func segments(x, vs nums) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i, v := range vs {
		switch {
		case isGap(v):
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
		case math.IsNaN(v) || math.IsInf(v, 0):
		default:
			cur = append(cur, plotter.XY{X: x[i], Y: v})
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func maxY(xys plotter.XYs) float64 {
	m := 0.0
	for _, p := range xys {
		m = max(m, p.Y)
	}
	return m
}

func tpsBars(runs []*store.Run, names []string) (*plot.Plot, error) {
	p := newPlot("Throughput by run", "", "tx/s")
	vals := make(plotter.Values, len(runs))
	for i, r := range runs {
		vals[i] = r.Summary.TPS
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(min(120, 600/float64(len(runs)))))
	if err != nil {
		return nil, fmt.Errorf("chart tps-bars.png: %w", err)
	}
	bars.Color = parseColor(palette[0])
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(runs))-0.4
	bl, err := plotter.NewLabels(plotter.XYLabels{XYs: barTops(vals), Labels: barTexts(vals)})
	if err == nil {
		p.Add(bl)
	}
	top := 0.0
	for _, v := range vals {
		top = max(top, v)
	}
	p.Y.Max = max(top, 1) * 1.12
	return p, nil
}

func barTops(vals plotter.Values) plotter.XYs {
	xys := make(plotter.XYs, len(vals))
	for i, v := range vals {
		xys[i] = plotter.XY{X: float64(i) - 0.1, Y: v * 1.02}
	}
	return xys
}

func barTexts(vals plotter.Values) []string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = fmtNum(v)
	}
	return s
}

func renderPNG(p *plot.Plot) ([]byte, error) {
	w := vg.Length(PNGWidth) * vg.Inch / pngDPI
	h := vg.Length(PNGHeight) * vg.Inch / pngDPI
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))
	m := vg.Points(10)
	p.Draw(draw.Crop(draw.New(c), m, -m, m, -m))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
