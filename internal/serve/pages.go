package serve

import (
	_ "embed"
	"net/http"
	"net/url"
	"strconv"

	"github.com/pgarena/pgarena/internal/plan"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/report/htmlw"
)

// The pages of serve are written in document order; values are escaped by
// htmlw as html/template escaped them (pages_test.go compares with the
// templates the pages were once rendered by).

//go:embed assets/live.js
var liveJS []byte

const layoutCSS = `body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5em 2em; color: #1d2731; }
header { border-bottom: 1px solid #d6dde3; padding: .6em 0; margin-bottom: 1em; }
header a { margin-right: 1em; }
table { border-collapse: collapse; }
th, td { padding: .25em .6em; border-bottom: 1px solid #e6ebef; text-align: left; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.running { color: #1f77b4; font-weight: 600; } .degraded, .failed, .corrupt { color: #d62728; font-weight: 600; }
.interrupted, .autostopped, .stopped { color: #ff7f0e; font-weight: 600; }
.error { color: #d62728; } .muted { color: #5d6b78; }
form.filters input, form.filters select { margin-right: .8em; }
`

// render writes a page: head, then body, to a buffer first, then to w.
func render(w http.ResponseWriter, title string, body func(*htmlw.Writer)) {
	var b htmlw.Writer
	writeHead(&b, title)
	body(&b)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

func writeHead(w *htmlw.Writer, title string) {
	w.S("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
	w.T(title)
	w.S("</title>\n<style>\n", layoutCSS, "</style>\n</head>\n<body>\n",
		"<header><a href=\"/\">runs</a><span class=\"muted\">pgarena serve · read-only</span></header>\n")
}

func fmtMS(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// writeRunRow writes a run's row of a list table.
func writeRunRow(w *htmlw.Writer, r listRow) {
	w.S("<tr>\n<td><input type=\"checkbox\" name=\"run\" value=\"")
	w.T(r.ID)
	w.S("\"></td>\n<td><a href=\"/run/")
	w.URLPath(r.ID)
	w.S("\">")
	w.T(r.ID)
	w.S("</a></td>\n<td>")
	w.T(r.Created.Local().Format("2006-01-02 15:04:05"))
	w.S("</td>\n<td class=\"label\">")
	w.T(r.Label)
	w.S("</td>\n<td>")
	w.T(r.Workload)
	w.S("</td>\n<td>")
	w.T(r.Target)
	w.S("</td>\n<td class=\"")
	w.T(r.Status)
	w.S("\">")
	w.T(r.Status)
	w.S("</td>\n<td class=\"num\">")
	w.T(r.Headline())
	if repl := r.Repl(); repl != "" {
		w.S("<br><small class=\"muted repl\">")
		w.T(repl)
		w.S("</small>")
	}
	w.S("</td>\n<td class=\"num\">")
	if r.P95MS != 0 {
		w.T(fmtMS(r.P95MS))
	} else {
		w.S("-")
	}
	w.S("</td>\n<td class=\"num\">")
	w.V(r.Failed)
	w.S("</td>\n</tr>\n")
}

func (p *listPage) write(w *htmlw.Writer) {
	q := &p.Query
	w.S("\n<h1>Runs <small class=\"muted\">")
	w.T(p.Dir)
	w.S(": ")
	w.V(p.Total)
	w.S(" runs</small></h1>\n<form class=\"filters\" method=\"get\" action=\"/\">\nlabel <input name=\"label\" value=\"")
	w.T(q.Label)
	w.S("\" placeholder=\"glob, e.g. c4*\">\nworkload <select name=\"workload\"><option value=\"\">any</option>")
	for _, wl := range p.Workloads {
		w.S("<option")
		if wl == q.Workload {
			w.S(" selected")
		}
		w.S(">")
		w.T(wl)
		w.S("</option>")
	}
	w.S("</select>\nsince <input name=\"since\" value=\"")
	w.T(q.Since)
	w.S("\" placeholder=\"24h or 2026-01-31\" size=\"14\">\n<input type=\"hidden\" name=\"sort\" value=\"")
	w.T(q.Sort)
	w.S("\"><input type=\"hidden\" name=\"order\" value=\"")
	w.T(q.Order)
	w.S("\">\n<button>filter</button>\n</form>\n")
	if p.Error != "" {
		w.S("<p class=\"error\">")
		w.T(p.Error)
		w.S("</p>")
	}
	w.S("\n<form method=\"get\" action=\"/compare\" id=\"runs\">\n",
		"<p><button>compare selected</button> <span class=\"muted\">(the first selected is the baseline)</span></p>\n",
		"<table id=\"runs-table\">\n<thead><tr><th></th>")
	for _, c := range [][2]string{{"created", "run"}, {"created", "created"}, {"label", "label"}, {"workload", "workload"},
		{"", "target"}, {"status", "status"}, {"tps", "tps / NOPM"}, {"p95", "p95 ms"}, {"failed", "failures"}} {
		w.S("<th>")
		if c[0] != "" {
			w.S("<a href=\"")
			w.URL(q.SortLink(c[0]))
			w.S("\">", c[1], "</a>")
		} else {
			w.S(c[1])
		}
		w.S("</th>")
	}
	w.S("</tr></thead>\n<tbody>\n")
	for _, r := range p.Rows {
		writeRunRow(w, r)
	}
	if len(p.Rows) == 0 {
		w.S("<tr><td colspan=\"10\" class=\"muted\">no runs")
		if q.Label != "" {
			w.S(" match")
		}
		w.S("</td></tr>")
	}
	w.S("\n</tbody>\n</table>\n")
	for _, g := range p.Plans {
		g.write(w)
	}
	w.S("\n</form>\n</body>\n</html>\n")
}

func (g *planGroup) write(w *htmlw.Writer) {
	w.S("\n<h2 class=\"plan\">plan ")
	w.T(g.Name)
	w.S(" <small><a href=\"/plan/")
	w.URLPath(g.Name)
	w.S("\">status</a></small></h2>\n<table class=\"plan-table\">\n",
		"<thead><tr><th></th><th>run</th><th>created</th><th>label</th><th>workload</th><th>target</th><th>status</th><th>tps / NOPM</th><th>p95 ms</th><th>failures</th></tr></thead>\n<tbody>\n")
	for _, r := range g.Rows {
		writeRunRow(w, r)
		w.S("<tr class=\"cell\"><td></td><td colspan=\"9\" class=\"muted\">cell ")
		w.T(r.CellName)
		w.S(", repeat ")
		w.V(r.Repeat)
		w.S("</td></tr>\n")
	}
	w.S("</tbody>\n</table>\n")
}

func (p *planPage) write(w *htmlw.Writer) {
	w.S("\n<h1>Plan ")
	w.T(p.Name)
	w.S("</h1>\n")
	if p.Error != "" {
		w.S("<p class=\"error\">")
		w.T(p.Error)
		w.S("</p>")
	}
	w.S("\n")
	if p.FromTags {
		w.S("<p class=\"muted\">From the runs' tags (start serve with --plan FILE to see cells that have no run yet).</p>")
	} else {
		w.S("<p class=\"muted\">")
		w.T(p.File)
		w.S("</p>")
	}
	w.S("\n<p id=\"plan-counts\">")
	for i, k := range []string{"done", "running", "failed", "pending"} {
		if i > 0 {
			w.S(" · ")
		}
		w.S(k, " ")
		w.V(p.Counts[k])
	}
	if p.ETA != "" {
		w.S(" · ETA ")
		w.T(p.ETA)
	}
	if p.Foreign != 0 {
		w.S(" · ")
		w.V(p.Foreign)
		w.S(" runs of cells no longer in the plan")
	}
	w.S("</p>\n<table id=\"plan-cells\">\n",
		"<thead><tr><th>#</th><th>cell</th><th>repeat</th><th>state</th><th>attempts</th><th>run</th><th>status</th><th>tps</th><th>p95 ms</th></tr></thead>\n<tbody>\n")
	for _, c := range p.Cells {
		writePlanCell(w, &c)
	}
	w.S("</tbody>\n</table>\n</body>\n</html>\n")
}

func writePlanCell(w *htmlw.Writer, c *plan.CellState) {
	w.S("<tr><td class=\"num\">")
	w.V(c.Index)
	w.S("</td><td>")
	w.T(c.Name)
	w.S("</td><td class=\"num\">")
	w.V(c.Repeat)
	w.S("</td><td class=\"")
	w.T(c.State)
	w.S("\">")
	w.T(c.State)
	w.S("</td><td class=\"num\">")
	w.V(c.Attempts)
	w.S("</td>\n")
	r := c.Run
	if r == nil {
		w.S("<td></td><td></td><td></td><td></td></tr>\n")
		return
	}
	w.S("<td><a href=\"/run/")
	w.URLPath(r.ID)
	w.S("\">")
	w.T(r.ID)
	w.S("</a></td><td class=\"")
	w.T(r.Status)
	w.S("\">")
	w.T(r.Status)
	w.S("</td><td class=\"num\">")
	w.F("%.1f", r.TPS)
	w.S("</td><td class=\"num\">")
	w.T(fmtMS(r.P95MS))
	w.S("</td></tr>\n")
}

// pngPage lists a run's charts as PNG downloads.
type pngPage struct {
	ID     string
	Charts []report.PNGChart
	W, H   int
}

func (p *pngPage) write(w *htmlw.Writer) {
	id := url.PathEscape(p.ID)
	w.S("\n<h1>PNG charts of <a href=\"/run/")
	w.URLPath(id)
	w.S("\">")
	w.T(p.ID)
	w.S("</a></h1>\n<p class=\"muted\">")
	w.V(p.W)
	w.S("×")
	w.V(p.H)
	w.S(" pixels · <a href=\"/download/png?")
	w.URLPath("run=" + url.QueryEscape(p.ID))
	w.S("\">all as a zip</a></p>\n<ul id=\"png-charts\">\n")
	for _, c := range p.Charts {
		w.S("<li><a href=\"/run/")
		w.URLPath(id)
		w.S("/png/")
		w.URLPath(url.PathEscape(c.Name))
		w.S("\" download>")
		w.T(c.Name)
		w.S("</a></li>\n")
	}
	w.S("</ul>\n</body>\n</html>\n")
}

func urlEscape(s string) string { return url.QueryEscape(s) }

func (s *Server) handleLiveJS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	_, _ = w.Write(liveJS)
}
