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
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	w.Elem("<title>", title, "</title>\n")
	w.S("<style>\n", layoutCSS, "</style>\n</head>\n<body>\n",
		"<header><a href=\"/\">runs</a><span class=\"muted\">pgarena serve · read-only</span></header>\n")
}

func fmtMS(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// runLink writes a link to a run's page.
func runLink(w *htmlw.Writer, id string) {
	w.S(`<a href="/run/`)
	w.URLPath(id)
	w.Elem(`">`, id, "</a>")
}

// classCell writes a cell whose class is its text (a status or a state).
func classCell(w *htmlw.Writer, text string) {
	w.S("<td")
	w.Attr("class", text)
	w.Elem(">", text, "</td>")
}

// writeRunRow writes a run's row of a list table.
func writeRunRow(w *htmlw.Writer, r listRow) {
	w.S("<tr>\n")
	w.Elem(`<td><input type="checkbox" name="run" value="`, r.ID, `"></td>`+"\n")
	w.S("<td>")
	runLink(w, r.ID)
	w.S("</td>\n")
	w.Elem("<td>", r.Created.Local().Format("2006-01-02 15:04:05"), "</td>\n")
	w.Elem(`<td class="label">`, r.Label, "</td>\n")
	w.Elems("<td>", "</td>\n", r.Workload, r.Target)
	classCell(w, r.Status)
	w.S("\n", `<td class="num">`)
	w.T(r.Headline())
	if repl := r.Repl(); repl != "" {
		w.Elem(`<br><small class="muted repl">`, repl, "</small>")
	}
	w.S("</td>\n")
	p95 := "-"
	if r.P95MS != 0 {
		p95 = fmtMS(r.P95MS)
	}
	w.Elems(`<td class="num">`, "</td>\n", p95, strconv.FormatInt(r.Failed, 10))
	w.S("</tr>\n")
}

func (p *listPage) write(w *htmlw.Writer) {
	q := &p.Query
	w.Elem("\n<h1>Runs <small class=\"muted\">", p.Dir, ": ")
	w.T(strconv.Itoa(p.Total))
	w.S(" runs</small></h1>\n", `<form class="filters" method="get" action="/">`, "\n")
	w.Elem(`label <input name="label" value="`, q.Label, `" placeholder="glob, e.g. c4*">`+"\n")
	w.S(`workload <select name="workload"><option value="">any</option>`)
	for _, wl := range p.Workloads {
		w.S("<option")
		if wl == q.Workload {
			w.S(" selected")
		}
		w.Elem(">", wl, "</option>")
	}
	w.S("</select>\n")
	w.Elem(`since <input name="since" value="`, q.Since, `" placeholder="24h or 2026-01-31" size="14">`+"\n")
	w.Elem(`<input type="hidden" name="sort" value="`, q.Sort, `">`)
	w.Elem(`<input type="hidden" name="order" value="`, q.Order, `">`+"\n")
	w.S("<button>filter</button>\n</form>\n")
	if p.Error != "" {
		w.Elem(`<p class="error">`, p.Error, "</p>")
	}
	w.S("\n<form method=\"get\" action=\"/compare\" id=\"runs\">\n",
		"<p><button>compare selected</button> <span class=\"muted\">(the first selected is the baseline)</span></p>\n",
		"<table id=\"runs-table\">\n<thead><tr><th></th>")
	for _, c := range [][2]string{{"created", "run"}, {"created", "created"}, {"label", "label"}, {"workload", "workload"},
		{"", "target"}, {"status", "status"}, {"tps", "tps / NOPM"}, {"p95", "p95 ms"}, {"failed", "failures"}} {
		if c[0] == "" {
			w.S("<th>", c[1], "</th>")
			continue
		}
		w.S(`<th><a href="`)
		w.URL(q.SortLink(c[0]))
		w.S(`">`, c[1], "</a></th>")
	}
	w.S("</tr></thead>\n<tbody>\n")
	for _, r := range p.Rows {
		writeRunRow(w, r)
	}
	if len(p.Rows) == 0 {
		w.S(`<tr><td colspan="10" class="muted">no runs`)
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
	w.Elem("\n<h2 class=\"plan\">plan ", g.Name, " <small>")
	w.S(`<a href="/plan/`)
	w.URLPath(g.Name)
	w.S(`">status</a></small></h2>`, "\n<table class=\"plan-table\">\n",
		"<thead><tr><th></th><th>run</th><th>created</th><th>label</th><th>workload</th><th>target</th><th>status</th><th>tps / NOPM</th><th>p95 ms</th><th>failures</th></tr></thead>\n<tbody>\n")
	for _, r := range g.Rows {
		writeRunRow(w, r)
		w.Elem(`<tr class="cell"><td></td><td colspan="9" class="muted">cell `, r.CellName, ", repeat ")
		w.T(strconv.Itoa(r.Repeat))
		w.S("</td></tr>\n")
	}
	w.S("</tbody>\n</table>\n")
}

func (p *planPage) write(w *htmlw.Writer) {
	w.Elem("\n<h1>Plan ", p.Name, "</h1>\n")
	if p.Error != "" {
		w.Elem(`<p class="error">`, p.Error, "</p>")
	}
	w.S("\n")
	if p.FromTags {
		w.S(`<p class="muted">From the runs' tags (start serve with --plan FILE to see cells that have no run yet).</p>`)
	} else {
		w.Elem(`<p class="muted">`, p.File, "</p>")
	}
	w.S("\n<p id=\"plan-counts\">")
	for i, k := range []string{"done", "running", "failed", "pending"} {
		if i > 0 {
			w.S(" · ")
		}
		w.S(k, " ")
		w.T(strconv.Itoa(p.Counts[k]))
	}
	if p.ETA != "" {
		w.S(" · ETA ")
		w.T(p.ETA)
	}
	if p.Foreign != 0 {
		w.Elem(" · ", strconv.Itoa(p.Foreign), " runs of cells no longer in the plan")
	}
	w.S("</p>\n<table id=\"plan-cells\">\n",
		"<thead><tr><th>#</th><th>cell</th><th>repeat</th><th>state</th><th>attempts</th><th>run</th><th>status</th><th>tps</th><th>p95 ms</th></tr></thead>\n<tbody>\n")
	for _, c := range p.Cells {
		writePlanCell(w, &c)
	}
	w.S("</tbody>\n</table>\n</body>\n</html>\n")
}

func writePlanCell(w *htmlw.Writer, c *plan.CellState) {
	w.Elem(`<tr><td class="num">`, strconv.Itoa(c.Index), "</td>")
	w.Elem("<td>", c.Name, "</td>")
	w.Elem(`<td class="num">`, strconv.Itoa(c.Repeat), "</td>")
	classCell(w, c.State)
	w.Elem(`<td class="num">`, strconv.Itoa(c.Attempts), "</td>\n")
	r := c.Run
	if r == nil {
		w.S("<td></td><td></td><td></td><td></td></tr>\n")
		return
	}
	w.S("<td>")
	runLink(w, r.ID)
	w.S("</td>")
	classCell(w, r.Status)
	w.Elems(`<td class="num">`, "</td>", strconv.FormatFloat(r.TPS, 'f', 1, 64), fmtMS(r.P95MS))
	w.S("</tr>\n")
}

// pngPage lists a run's charts as PNG downloads.
type pngPage struct {
	ID     string
	Charts []report.PNGChart
	W, H   int
}

func (p *pngPage) write(w *htmlw.Writer) {
	id := url.PathEscape(p.ID)
	w.S("\n<h1>PNG charts of ", `<a href="/run/`)
	w.URLPath(id)
	w.Elem(`">`, p.ID, "</a></h1>\n")
	w.Elem(`<p class="muted">`, strconv.Itoa(p.W), "×")
	w.T(strconv.Itoa(p.H))
	w.S(` pixels · <a href="/download/png?`)
	w.URLPath("run=" + url.QueryEscape(p.ID))
	w.S(`">all as a zip</a></p>`, "\n<ul id=\"png-charts\">\n")
	for _, c := range p.Charts {
		w.S(`<li><a href="/run/`)
		w.URLPath(id)
		w.S("/png/")
		w.URLPath(url.PathEscape(c.Name))
		w.Elem(`" download>`, c.Name, "</a></li>\n")
	}
	w.S("</ul>\n</body>\n</html>\n")
}

func urlEscape(s string) string { return url.QueryEscape(s) }

func (s *Server) handleLiveJS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	_, _ = w.Write(liveJS)
}
