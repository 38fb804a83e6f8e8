package report

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"

	"github.com/pgarena/pgarena/internal/store"
)

// PNG chart size: 1200×600 pixels, a common width for a blog post's column
// at double density.
const (
	PNGWidth, PNGHeight = 1200, 600
)

// The plot area's margins, pixels: tick labels on the left, the x axis'
// labels below, the title above.
const (
	marginL, marginR, marginT, marginB = 80, 24, 64, 56
)

// PNGChart is one chart rendered as a PNG image.
type PNGChart struct {
	Name string // file name, e.g. "throughput.png"
	Data []byte
}

// PNGs renders the report's main charts as PNG images: throughput and
// latency percentiles over time (several runs overlaid), and for several
// runs a bar chart of throughput. They are drawn here, lines and a fixed
// 7×13 font (golang.org/x/image's rasterizer and basicfont), so that no
// plotting library and no TrueType font is initialised by a command that
// draws no chart.
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
		name := c.ID + ".png"
		if c.ID == "latency-0" {
			name = "latency.png"
		}
		b, err := encodePNG(linePlot(cs.X, c))
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", name, err)
		}
		out = append(out, PNGChart{Name: name, Data: b})
	}
	if len(runs) > 1 {
		b, err := encodePNG(tpsBars(runs, names))
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

var (
	gridColor = color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
	textColor = color.RGBA{R: 0x22, G: 0x22, B: 0x22, A: 0xff}
)

// canvas is a chart being drawn: the image, the plot area and its scales
// (data to pixels).
type canvas struct {
	img                    *image.RGBA
	area                   image.Rectangle
	xmin, xmax, ymin, ymax float64
	z                      vector.Rasterizer
}

func newCanvas(title, xlabel, ylabel string, xmin, xmax, ymax float64) *canvas {
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, PNGWidth, PNGHeight)),
		area: image.Rect(marginL, marginT, PNGWidth-marginR, PNGHeight-marginB),
		xmin: xmin, xmax: xmax, ymax: ymax}
	if c.xmax <= c.xmin {
		c.xmax = c.xmin + 1
	}
	draw.Draw(c.img, c.img.Bounds(), image.White, image.Point{}, draw.Src)
	c.text(title, PNGWidth/2, 34, 2, 0.5, textColor)
	c.text(xlabel, (c.area.Min.X+c.area.Max.X)/2, PNGHeight-12, 1, 0.5, textColor)
	c.text(ylabel, c.area.Min.X, c.area.Min.Y-10, 1, 0.5, textColor)
	step := niceCeil(ymax / 5)
	for y := 0.0; y <= ymax*1.0001; y += step {
		py := c.py(y)
		c.line([][2]float64{{float64(c.area.Min.X), py}, {float64(c.area.Max.X), py}}, 1, nil, gridColor)
		c.text(strconv.FormatFloat(y, 'g', 6, 64), c.area.Min.X-6, int(py)+4, 1, 1, textColor)
	}
	return c
}

func (c *canvas) px(x float64) float64 {
	return float64(c.area.Min.X) + (x-c.xmin)/(c.xmax-c.xmin)*float64(c.area.Dx())
}

func (c *canvas) py(y float64) float64 {
	return float64(c.area.Max.Y) - (y-c.ymin)/(c.ymax-c.ymin)*float64(c.area.Dy())
}

// xTicks draws the x axis' grid and labels, about 8 of them.
func (c *canvas) xTicks() {
	step := niceCeil((c.xmax - c.xmin) / 8)
	for x := math.Ceil(c.xmin/step) * step; x <= c.xmax*1.0001; x += step {
		px := c.px(x)
		c.line([][2]float64{{px, float64(c.area.Min.Y)}, {px, float64(c.area.Max.Y)}}, 1, nil, gridColor)
		c.text(strconv.FormatFloat(x, 'g', 6, 64), int(px), c.area.Max.Y+18, 1, 0.5, textColor)
	}
}

// frame draws the plot area's axes.
func (c *canvas) frame() {
	a := c.area
	c.line([][2]float64{{float64(a.Min.X), float64(a.Min.Y)}, {float64(a.Min.X), float64(a.Max.Y)},
		{float64(a.Max.X), float64(a.Max.Y)}}, 1, nil, textColor)
}

// line strokes a polyline of pixel points, width w, dashed when dash
// (on, off lengths) is set.
func (c *canvas) line(pts [][2]float64, w float64, dash []float64, col color.Color) {
	b := c.img.Bounds()
	c.z.Reset(b.Dx(), b.Dy())
	phase, on := 0.0, true
	for i := 1; i < len(pts); i++ {
		x0, y0, x1, y1 := pts[i-1][0], pts[i-1][1], pts[i][0], pts[i][1]
		l := math.Hypot(x1-x0, y1-y0)
		if l == 0 {
			continue
		}
		if dash == nil {
			c.quad(x0, y0, x1, y1, w)
			continue
		}
		for t := 0.0; t < l; {
			n := min(l-t, dash[boolIndex(!on)]-phase)
			if on {
				c.quad(x0+(x1-x0)*t/l, y0+(y1-y0)*t/l, x0+(x1-x0)*(t+n)/l, y0+(y1-y0)*(t+n)/l, w)
			}
			t, phase = t+n, phase+n
			if phase >= dash[boolIndex(!on)] {
				phase, on = 0, !on
			}
		}
	}
	c.z.Draw(c.img, b, image.NewUniform(col), image.Point{})
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// quad adds one segment of a stroke, w wide, to the rasterizer; every
// quad turns the same way, so overlaps add up rather than cancel.
func (c *canvas) quad(x0, y0, x1, y1, w float64) {
	l := math.Hypot(x1-x0, y1-y0)
	// Half the width across the segment, and as much past its ends
	// (square caps that join the next segment).
	nx, ny := -(y1-y0)/l*w/2, (x1-x0)/l*w/2
	ex, ey := (x1-x0)/l*w/2, (y1-y0)/l*w/2
	x0, y0, x1, y1 = x0-ex, y0-ey, x1+ex, y1+ey
	c.z.MoveTo(float32(x0+nx), float32(y0+ny))
	c.z.LineTo(float32(x1+nx), float32(y1+ny))
	c.z.LineTo(float32(x1-nx), float32(y1-ny))
	c.z.LineTo(float32(x0-nx), float32(y0-ny))
	c.z.ClosePath()
}

// rect fills a rectangle of pixels.
func (c *canvas) rect(r image.Rectangle, col color.Color) {
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Over)
}

// text writes s with its baseline at y, scaled by an integer factor;
// anchor 0 puts its left end at x, 0.5 its middle, 1 its right end.
func (c *canvas) text(s string, x, y, scale int, anchor float64, col color.Color) {
	if s == "" {
		return
	}
	face := basicfont.Face7x13
	w := font.MeasureString(face, s).Ceil()
	if scale == 1 {
		d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: face, Dot: fixed.P(x-int(anchor*float64(w)), y)}
		d.DrawString(s)
		return
	}
	// Larger: drawn at 1× on its own, then each pixel as a scale×scale block.
	small := image.NewRGBA(image.Rect(0, 0, w, 13))
	d := font.Drawer{Dst: small, Src: image.NewUniform(col), Face: face, Dot: fixed.P(0, 10)}
	d.DrawString(s)
	x0, y0 := x-int(anchor*float64(w*scale)), y-10*scale
	for sy := 0; sy < 13; sy++ {
		for sx := 0; sx < w; sx++ {
			if p := small.RGBAAt(sx, sy); p.A > 0 {
				c.rect(image.Rect(x0+sx*scale, y0+sy*scale, x0+(sx+1)*scale, y0+(sy+1)*scale), p)
			}
		}
	}
}

// legend lists the series' names at the plot area's top right, each
// beside a stroke of its line.
func (c *canvas) legend(ss []series) {
	wide := 0
	for _, s := range ss {
		wide = max(wide, font.MeasureString(basicfont.Face7x13, s.Name).Ceil())
	}
	x1 := c.area.Max.X - 8
	x0 := x1 - wide - 44
	y := c.area.Min.Y + 8
	box := image.Rect(x0-6, y-4, x1+6, y+16*len(ss)+2)
	c.rect(box, gridColor)
	c.rect(box.Inset(1), color.White)
	for i, s := range ss {
		ly := float64(y + 16*i + 7)
		c.line([][2]float64{{float64(x0), ly}, {float64(x0 + 30), ly}}, 2, dashOf(s), parseColor(s.Color))
		c.text(s.Name, x0+38, int(ly)+4, 1, 0, textColor)
	}
}

func dashOf(s series) []float64 {
	if s.Dash {
		return []float64{8, 5}
	}
	return nil
}

func linePlot(x nums, c chart) *canvas {
	ymax, xmin, xmax := 0.0, math.Inf(1), math.Inf(-1)
	var lines [][][][2]float64 // per series, its segments
	for _, s := range c.Series {
		segs := segments(x, s.Values)
		for _, seg := range segs {
			for _, p := range seg {
				ymax, xmin, xmax = max(ymax, p[1]), min(xmin, p[0]), max(xmax, p[0])
			}
		}
		lines = append(lines, segs)
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax = 0, 1
	}
	// Headroom for the legend, one line per series.
	cv := newCanvas(c.Title, "elapsed s", c.Unit, xmin, xmax, max(ymax, 1)*(1.1+0.06*float64(len(c.Series))))
	cv.xTicks()
	for i, s := range c.Series {
		for _, seg := range lines[i] {
			pts := make([][2]float64, len(seg))
			for j, p := range seg {
				pts[j] = [2]float64{cv.px(p[0]), cv.py(p[1])}
			}
			if len(pts) == 1 { // a lone point: a dot
				pts = append(pts, [2]float64{pts[0][0] + 0.5, pts[0][1]})
			}
			cv.line(pts, 2, dashOf(s), parseColor(s.Color))
		}
	}
	cv.frame()
	cv.legend(c.Series)
	return cv
}

// segments splits a series into the runs of points between its gaps (a
// line breaks at a gap); points without a value (NaN) are joined over.
func segments(x, vs nums) [][][2]float64 {
	var out [][][2]float64
	var cur [][2]float64
	for i, v := range vs {
		switch {
		case isGap(v):
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
		case math.IsNaN(v) || math.IsInf(v, 0):
		default:
			cur = append(cur, [2]float64{x[i], v})
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func tpsBars(runs []*store.Run, names []string) *canvas {
	top := 0.0
	for _, r := range runs {
		top = max(top, r.Summary.TPS)
	}
	n := float64(len(runs))
	cv := newCanvas("Throughput by run", "", "tx/s", -0.6, n-0.4, max(top, 1)*1.12)
	half := min(120, 600/n) * 4 / 3 / 2 // points at 96 dpi, halved
	for i, r := range runs {
		px := cv.px(float64(i))
		cv.rect(image.Rect(int(px-half), int(cv.py(r.Summary.TPS)), int(px+half), cv.area.Max.Y), parseColor(palette[0]))
		cv.text(fmtNum(r.Summary.TPS), int(px), int(cv.py(r.Summary.TPS))-6, 1, 0.5, textColor)
		cv.text(names[i], int(px), cv.area.Max.Y+18, 1, 0.5, textColor)
	}
	cv.frame()
	return cv
}

func encodePNG(c *canvas) ([]byte, error) {
	var b bytes.Buffer
	if err := png.Encode(&b, c.img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
