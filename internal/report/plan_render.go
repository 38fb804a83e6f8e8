package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/pgarena/pgarena/internal/report/htmlw"
)

// This file writes the plan's report (planPage) in document order; values
// are escaped by htmlw as html/template escaped them (plan_render_test.go
// compares with the template the page was once rendered by).

const planCSS = `body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart { margin: 1em 0; }
.legend span { display: inline-block; margin-right: 1.5em; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: middle; }
.state-failed { color: #b00; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
`

func (pg *planPage) render(w *htmlw.Writer) {
	w.S("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	w.Elem("<title>pgarena plan ", pg.Name, "</title>\n")
	w.S("<style>\n", planCSS, "</style>\n</head>\n<body>\n")
	w.Elem("<h1>Plan ", pg.Name, "</h1>\n")
	w.Elem(`<p id="plan-counts">`, strconv.Itoa(len(pg.Rows)), " runs planned:\n")
	for _, k := range slices.Sorted(maps.Keys(pg.Counts)) {
		w.T(strconv.Itoa(pg.Counts[k]) + " " + k + " ")
	}
	w.S("</p>\n\n")
	w.Elem("<h2>", pg.Metric, " by cell</h2>\n")
	for i := range pg.Charts {
		pg.Charts[i].render(w)
	}
	if len(pg.Charts) == 0 {
		w.S("\n<p>No chart: the matrix has no numeric axis (clients, rate, ...) or no cell is done yet.</p>\n")
	}
	w.S("\n\n")
	pg.Replication.render(w)
	w.S("\n")
	pg.renderCells(w)
	pg.renderRuns(w)
	w.S("\n<h2>Environment</h2>\n<table id=\"plan-env\">\n")
	for _, e := range pg.Environment {
		w.Elem("<tr><th>", e.Key, "</th>")
		w.Elem("<td>", e.Value, "</td></tr>\n")
	}
	w.S("</table>\n</body>\n</html>\n")
}

func (c *svgChart) render(w *htmlw.Writer) {
	width, height := strconv.Itoa(c.Width), strconv.Itoa(c.Height)
	w.S("\n<div class=\"chart\">\n")
	w.Elem("<h3>", c.Title, "</h3>\n")
	w.S(`<svg class="plan-chart"`)
	w.Attr("width", width)
	w.Attr("height", height)
	w.Attr("viewBox", "0 0 "+width+" "+height)
	w.S(` role="img"`)
	w.Attr("aria-label", c.Title)
	w.S(">\n", `<rect x="0" y="0"`)
	w.Attr("width", width)
	w.Attr("height", height)
	w.S(` fill="#fff"/>`, "\n")
	for _, t := range c.YTicks {
		pos := fmt.Sprint(t.Pos)
		w.S(`<line x1="70" x2="700"`)
		w.Attr("y1", pos)
		w.Attr("y2", pos)
		w.S(` stroke="#eee"/><text x="64"`)
		w.Attr("y", pos)
		w.Elem(` text-anchor="end" dominant-baseline="middle">`, t.Label, "</text>\n")
	}
	for _, t := range c.XTicks {
		pos := fmt.Sprint(t.Pos)
		w.S("<line")
		w.Attr("x1", pos)
		w.Attr("x2", pos)
		w.S(` y1="20" y2="310" stroke="#f3f3f3"/><text`)
		w.Attr("x", pos)
		w.Elem(` y="326" text-anchor="middle">`, t.Label, "</text>\n")
	}
	w.S(`<line x1="70" x2="700" y1="310" y2="310" stroke="#888"/><line x1="70" x2="70" y1="20" y2="310" stroke="#888"/>`, "\n")
	w.Elem(`<text x="385" y="350" text-anchor="middle">`, c.XLabel, "</text>\n")
	w.Elem(`<text x="14" y="165" text-anchor="middle" transform="rotate(-90 14 165)">`, c.YLabel, "</text>\n")
	for _, s := range c.Series {
		s.render(w)
	}
	w.S("</svg>\n<div class=\"legend\">")
	for _, s := range c.Series {
		w.S(`<span><i style="background: `)
		w.CSSValue(s.Color)
		w.Elem(`"></i>`, s.Name, "</span>")
	}
	w.S("</div>\n</div>\n")
}

func (s *svgSeries) render(w *htmlw.Writer) {
	w.S(`<polyline class="series" fill="none"`)
	w.Attr("stroke", s.Color)
	w.S(` stroke-width="2"`)
	w.Attr("points", s.Points)
	w.S("/>\n")
	for _, d := range s.Dots {
		w.S("<circle")
		w.Attr("cx", fmt.Sprint(d.X))
		w.Attr("cy", fmt.Sprint(d.Y))
		w.S(` r="3.5"`)
		w.Attr("fill", s.Color)
		w.Elem("><title>", d.Title, "</title></circle>")
	}
	w.S("\n")
}

func (t *replicationTable) render(w *htmlw.Writer) {
	if t == nil {
		return
	}
	w.Elem("<h2>Sustainable tps by ", t.Axis, " and system</h2>\n")
	w.S("<p>transactions / (run time + the replica's catch-up after the load), as the classic comparison of replication systems reports it; ",
		"≤: a replica did not catch up within --catch-up-timeout (an upper bound)</p>\n<table id=\"plan-replication\">\n<tr>")
	w.Elem("<th>", t.Axis, "</th>")
	w.Elems("<th>", "</th>", t.Columns...)
	w.S("</tr>\n")
	for _, r := range t.Rows {
		w.S("<tr>")
		w.Elem(`<td class="num">`, r.Key, "</td>")
		w.Elems(`<td class="num">`, "</td>", r.Cells...)
		w.S("</tr>\n")
	}
	w.S("</table>\n")
}

func (pg *planPage) renderCells(w *htmlw.Writer) {
	w.S("<h2>Cells</h2>\n<p>Mean over the repeats that finished, ± the half-width of the 95% confidence interval (Student's t).</p>\n",
		"<table id=\"plan-cells\">\n<tr><th>cell</th><th>target</th><th>workload</th>")
	w.Elems("<th>", "</th>", pg.Axes...)
	w.S("<th>runs</th><th>failed</th><th>tps</th><th>p95 ms</th>")
	switch pg.Metric {
	case "nopm":
		w.S("<th>NOPM</th>")
	case "tps":
	default:
		w.Elem("<th>", pg.Metric, "</th>")
	}
	w.S("</tr>\n")
	for _, c := range pg.Cells {
		w.S("<tr>")
		w.Elems("<td>", "</td>", c.Name, c.Target, c.Workload)
		w.Elems("<td>", "</td>", c.Axes...)
		w.Elem(`<td class="num">`, strconv.Itoa(c.Runs), "</td>")
		w.S(`<td class="num`)
		if c.Failed != 0 {
			w.S(" state-failed")
		}
		w.Elem(`">`, strconv.Itoa(c.Failed), "</td>")
		w.Elems(`<td class="num">`, "</td>", fmtEstimate(c.TPS), fmtEstimate(c.P95))
		if pg.Metric != "tps" {
			w.Elem(`<td class="num">`, fmtEstimate(c.Figure), "</td>")
		}
		w.S("</tr>\n")
	}
	w.S("</table>\n")
}

func (pg *planPage) renderRuns(w *htmlw.Writer) {
	w.S("\n<h2>Runs</h2>\n<table id=\"plan-runs\">\n",
		"<tr><th>#</th><th>cell</th><th>repeat</th><th>state</th><th>run</th><th>status</th></tr>\n")
	for _, r := range pg.Rows {
		var id, status string
		if r.Run != nil {
			id, status = r.Run.ID, r.Run.Status
			if sr := r.Run.Summary.StopReason; sr != "" {
				status += ": " + sr
			}
		}
		w.Elem(`<tr><td class="num">`, strconv.Itoa(r.Index), "</td>")
		w.Elem("<td>", r.CellName, "</td>")
		w.Elem(`<td class="num">`, strconv.Itoa(r.Repeat), "</td>")
		w.Elem(`<td class="state-`, r.State, `">`)
		w.T(r.State)
		w.S("</td>")
		w.Elems("<td>", "</td>", id, status)
		w.S("</tr>\n")
	}
	w.S("</table>\n")
}
