package report

import (
	"maps"
	"slices"

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
	w.S("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>pgarena plan ")
	w.T(pg.Name)
	w.S("</title>\n<style>\n", planCSS, "</style>\n</head>\n<body>\n<h1>Plan ")
	w.T(pg.Name)
	w.S("</h1>\n<p id=\"plan-counts\">")
	w.V(len(pg.Rows))
	w.S(" runs planned:\n")
	for _, k := range slices.Sorted(maps.Keys(pg.Counts)) {
		w.V(pg.Counts[k])
		w.S(" ")
		w.T(k)
		w.S(" ")
	}
	w.S("</p>\n\n<h2>")
	w.T(pg.Metric)
	w.S(" by cell</h2>\n")
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
		w.S("<tr><th>")
		w.T(e.Key)
		w.S("</th><td>")
		w.T(e.Value)
		w.S("</td></tr>\n")
	}
	w.S("</table>\n</body>\n</html>\n")
}

func (c *svgChart) render(w *htmlw.Writer) {
	w.S("\n<div class=\"chart\">\n<h3>")
	w.T(c.Title)
	w.S("</h3>\n<svg class=\"plan-chart\" width=\"")
	w.V(c.Width)
	w.S("\" height=\"")
	w.V(c.Height)
	w.S("\" viewBox=\"0 0 ")
	w.V(c.Width)
	w.S(" ")
	w.V(c.Height)
	w.S("\" role=\"img\" aria-label=\"")
	w.T(c.Title)
	w.S("\">\n<rect x=\"0\" y=\"0\" width=\"")
	w.V(c.Width)
	w.S("\" height=\"")
	w.V(c.Height)
	w.S("\" fill=\"#fff\"/>\n")
	for _, t := range c.YTicks {
		w.S("<line x1=\"70\" x2=\"700\" y1=\"")
		w.V(t.Pos)
		w.S("\" y2=\"")
		w.V(t.Pos)
		w.S("\" stroke=\"#eee\"/><text x=\"64\" y=\"")
		w.V(t.Pos)
		w.S("\" text-anchor=\"end\" dominant-baseline=\"middle\">")
		w.T(t.Label)
		w.S("</text>\n")
	}
	for _, t := range c.XTicks {
		w.S("<line x1=\"")
		w.V(t.Pos)
		w.S("\" x2=\"")
		w.V(t.Pos)
		w.S("\" y1=\"20\" y2=\"310\" stroke=\"#f3f3f3\"/><text x=\"")
		w.V(t.Pos)
		w.S("\" y=\"326\" text-anchor=\"middle\">")
		w.T(t.Label)
		w.S("</text>\n")
	}
	w.S("<line x1=\"70\" x2=\"700\" y1=\"310\" y2=\"310\" stroke=\"#888\"/><line x1=\"70\" x2=\"70\" y1=\"20\" y2=\"310\" stroke=\"#888\"/>\n",
		"<text x=\"385\" y=\"350\" text-anchor=\"middle\">")
	w.T(c.XLabel)
	w.S("</text>\n<text x=\"14\" y=\"165\" text-anchor=\"middle\" transform=\"rotate(-90 14 165)\">")
	w.T(c.YLabel)
	w.S("</text>\n")
	for _, s := range c.Series {
		s.render(w)
	}
	w.S("</svg>\n<div class=\"legend\">")
	for _, s := range c.Series {
		w.S("<span><i style=\"background: ")
		w.CSSValue(s.Color)
		w.S("\"></i>")
		w.T(s.Name)
		w.S("</span>")
	}
	w.S("</div>\n</div>\n")
}

func (s *svgSeries) render(w *htmlw.Writer) {
	w.S("<polyline class=\"series\" fill=\"none\" stroke=\"")
	w.T(s.Color)
	w.S("\" stroke-width=\"2\" points=\"")
	w.T(s.Points)
	w.S("\"/>\n")
	for _, d := range s.Dots {
		w.S("<circle cx=\"")
		w.V(d.X)
		w.S("\" cy=\"")
		w.V(d.Y)
		w.S("\" r=\"3.5\" fill=\"")
		w.T(s.Color)
		w.S("\"><title>")
		w.T(d.Title)
		w.S("</title></circle>")
	}
	w.S("\n")
}

func (t *replicationTable) render(w *htmlw.Writer) {
	if t == nil {
		return
	}
	w.S("<h2>Sustainable tps by ")
	w.T(t.Axis)
	w.S(" and system</h2>\n<p>transactions / (run time + the replica's catch-up after the load), as the classic comparison of replication systems reports it; ",
		"≤: a replica did not catch up within --catch-up-timeout (an upper bound)</p>\n<table id=\"plan-replication\">\n<tr><th>")
	w.T(t.Axis)
	w.S("</th>")
	for _, c := range t.Columns {
		w.S("<th>")
		w.T(c)
		w.S("</th>")
	}
	w.S("</tr>\n")
	for _, r := range t.Rows {
		w.S("<tr><td class=\"num\">")
		w.T(r.Key)
		w.S("</td>")
		for _, c := range r.Cells {
			w.S("<td class=\"num\">")
			w.T(c)
			w.S("</td>")
		}
		w.S("</tr>\n")
	}
	w.S("</table>\n")
}

func (pg *planPage) renderCells(w *htmlw.Writer) {
	w.S("<h2>Cells</h2>\n<p>Mean over the repeats that finished, ± the half-width of the 95% confidence interval (Student's t).</p>\n",
		"<table id=\"plan-cells\">\n<tr><th>cell</th><th>target</th><th>workload</th>")
	for _, a := range pg.Axes {
		w.S("<th>")
		w.T(a)
		w.S("</th>")
	}
	w.S("<th>runs</th><th>failed</th><th>tps</th><th>p95 ms</th>")
	switch pg.Metric {
	case "nopm":
		w.S("<th>NOPM</th>")
	case "tps":
	default:
		w.S("<th>")
		w.T(pg.Metric)
		w.S("</th>")
	}
	w.S("</tr>\n")
	for _, c := range pg.Cells {
		w.S("<tr>")
		for _, s := range append([]string{c.Name, c.Target, c.Workload}, c.Axes...) {
			w.S("<td>")
			w.T(s)
			w.S("</td>")
		}
		w.S("<td class=\"num\">")
		w.V(c.Runs)
		w.S("</td><td class=\"num")
		if c.Failed != 0 {
			w.S(" state-failed")
		}
		w.S("\">")
		w.V(c.Failed)
		w.S("</td><td class=\"num\">")
		w.T(fmtEstimate(c.TPS))
		w.S("</td><td class=\"num\">")
		w.T(fmtEstimate(c.P95))
		w.S("</td>")
		if pg.Metric != "tps" {
			w.S("<td class=\"num\">")
			w.T(fmtEstimate(c.Figure))
			w.S("</td>")
		}
		w.S("</tr>\n")
	}
	w.S("</table>\n")
}

func (pg *planPage) renderRuns(w *htmlw.Writer) {
	w.S("\n<h2>Runs</h2>\n<table id=\"plan-runs\">\n",
		"<tr><th>#</th><th>cell</th><th>repeat</th><th>state</th><th>run</th><th>status</th></tr>\n")
	for _, r := range pg.Rows {
		w.S("<tr><td class=\"num\">")
		w.V(r.Index)
		w.S("</td><td>")
		w.T(r.CellName)
		w.S("</td><td class=\"num\">")
		w.V(r.Repeat)
		w.S("</td><td class=\"state-")
		w.T(r.State)
		w.S("\">")
		w.T(r.State)
		w.S("</td><td>")
		if r.Run != nil {
			w.T(r.Run.ID)
		}
		w.S("</td><td>")
		if r.Run != nil {
			w.T(r.Run.Status)
			if sr := r.Run.Summary.StopReason; sr != "" {
				w.S(": ")
				w.T(sr)
			}
		}
		w.S("</td></tr>\n")
	}
	w.S("</table>\n")
}
