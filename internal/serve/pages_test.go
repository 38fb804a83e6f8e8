package serve

import (
	"bytes"
	"embed"
	"html/template"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/plan"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/report/htmlw"
	"github.com/pgarena/pgarena/internal/store"
)

// The pages were rendered by html/template from these templates (and the
// inline ones below); they are now written by hand (pages.go, autostop.go,
// compare.go, run.go) and compared with the templates for hostile values.

//go:embed testdata/templates/*.tmpl
var referenceFS embed.FS

var referencePages = template.Must(template.New("").Funcs(template.FuncMap{
	"ms":   func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"path": url.PathEscape,
	"time": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"query": func(k, v string) template.URL {
		return template.URL(url.QueryEscape(k) + "=" + url.QueryEscape(v))
	},
}).ParseFS(referenceFS, "testdata/templates/*.tmpl"))

var referenceAutostop = template.Must(template.New("autostop").Parse(
	`<section id="autostop"><h2>Autostop rules</h2><ul class="autostop">` +
		`{{range .}}<li class="rule{{if .Fired}} fired{{else if .Holds}} holds{{end}}">{{.Text}}` +
		`{{if .Fired}} <strong>— fired: this rule stopped the run</strong>{{end}}</li>{{end}}</ul></section>` + "\n"))

var referenceCompareTop = template.Must(template.New("top").Parse(`<section class="serve-compare" style="padding:0 1em">
<h2>Comparison with the noise band</h2>
{{if .Refuse}}<p class="note interrupted">{{.Refuse}}</p>{{end}}
{{range .Warnings}}<p class="note">warning: {{.}}</p>{{end}}
<p>verdict metric: {{range .Metrics}}<a href="/compare?{{$.Query}}&amp;metric={{.}}">{{.}}</a> {{end}}</p>
<pre id="compare-text">{{.Text}}</pre>
</section>
`))

var referenceBar = template.Must(template.New("bar").Parse(
	`<nav class="serve" style="padding:.5em 1em;border-bottom:1px solid #d6dde3"><a href="/">runs</a> · download: ` +
		`<a href="/download/html?{{.Query}}">HTML report</a> · <a href="/download/csv?{{.Query}}">CSV</a> · <a href="/download/json?{{.Query}}">JSON</a> · <a href="/download/png?{{.Query}}">PNG charts (zip)</a>` +
		`{{with .Run}} · <a href="/run/{{.}}/png">PNG charts</a>{{end}}</nav>`))

// hostile are values a run, plan or request may carry that must not become
// markup, script or a link.
var hostile = []string{"<script>alert(1)</script>", `"'&+<b>`, "javascript:alert(1)", "a\u2028b\u2029c",
	"</script><script>x()</script>", "nul\x00end", "x;} body{color:red", "a b/c?d=e&f#g%41%zz"}

func h(i int) string { return hostile[i%len(hostile)] }

func checkSame(t *testing.T, what string, got []byte, ref *template.Template, name string, data any) {
	t.Helper()
	var want bytes.Buffer
	if err := ref.ExecuteTemplate(&want, name, data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		i := 0
		for i < min(len(got), want.Len()) && got[i] == want.Bytes()[i] {
			i++
		}
		t.Errorf("%s differs from html/template's at byte %d:\n got: %q\nwant: %q", what, i,
			got[max(0, i-100):min(len(got), i+100)], want.Bytes()[max(0, i-100):min(want.Len(), i+100)])
	}
}

func page(title string, body func(*htmlw.Writer)) []byte {
	var w htmlw.Writer
	writeHead(&w, title)
	body(&w)
	return w.Bytes()
}

func hostileRows(n int) []listRow {
	var rows []listRow
	for i := range n {
		ri := store.RunInfo{ID: h(i) + strconv.Itoa(i), Created: time.Unix(1e9, 0), Label: h(i + 1), Workload: h(i + 2), TPS: 12.5,
			P95MS: float64(i % 2), Status: h(i + 3), Target: h(i + 4), Failed: int64(i), NOPM: float64(i%3) * 100}
		ri.CellName, ri.Repeat = h(i+5), i
		if i%2 == 1 { // the replication cell, with its > and ≤
			ri.Replication = &metrics.Replication{CatchUpS: 1.5, SustainableTPS: 9, CaughtUp: i%4 == 1}
			ri.Failover = &metrics.Failover{FaultAtS: 3, DowntimeS: 1.25, LedgerAcked: 40}
		}
		rows = append(rows, listRow{ri})
	}
	return rows
}

func TestPagesSameAsTemplates(t *testing.T) {
	for i := range hostile {
		list := &listPage{Query: listQuery{Label: h(i), Workload: h(i + 1), Since: h(i + 2), Sort: "label", Order: h(i + 3)},
			Error: h(i + 4), Dir: h(i + 5), Total: i, Rows: hostileRows(i % 3), Workloads: []string{h(i), h(i + 1), "tpcb"},
			Plans: []planGroup{{Name: h(i + 6), Rows: hostileRows(2)}}}
		checkSame(t, "list", page("pgarena: runs", list.write), referencePages, "list", list)

		info := hostileRows(1)[0].RunInfo
		pl := &planPage{Name: h(i), File: h(i + 1), Error: h(i + 2), ETA: h(i + 3), Foreign: i % 2, FromTags: i%2 == 0,
			Counts: map[string]int{"done": 2, "failed": i},
			Cells: []plan.CellState{{Cell: plan.Cell{Name: h(i + 4), Index: 1, Repeat: 2}, State: h(i + 5), Run: &info, Attempts: 3},
				{Cell: plan.Cell{Name: h(i + 6), Index: 2}, State: "pending"}}}
		checkSame(t, "plan", page("pgarena: plan "+pl.Name, pl.write), referencePages, "plan", pl)

		png := &pngPage{ID: h(i), Charts: []report.PNGChart{{Name: h(i + 1)}, {Name: "throughput.png"}}, W: 800, H: 400}
		checkSame(t, "png", page("pgarena: PNG charts", png.write), referencePages, "png", png)

		rules := []ruleStatus{{Rule: metrics.Rule{Text: h(i)}, Fired: i%2 == 0}, {Err: h(i + 1), Holds: true},
			{Rule: metrics.Rule{Text: h(i + 2), Value: 5}, Measured: true, Value: 2.5, Holds: i%3 == 0}}
		var as htmlw.Writer
		writeAutostop(&as, rules)
		checkSame(t, "autostop", as.Bytes(), referenceAutostop, "autostop", rules)

		var top htmlw.Writer
		q := "run=" + url.QueryEscape(h(i)) + "&run=" + h(i+1)
		writeCompareTop(&top, h(i), []string{h(i + 1), h(i + 2)}, []string{h(i + 3), "tps"}, q, h(i+4))
		checkSame(t, "compare", top.Bytes(), referenceCompareTop, "top", map[string]any{"Refuse": h(i),
			"Warnings": []string{h(i + 1), h(i + 2)}, "Metrics": []string{h(i + 3), "tps"}, "Query": template.URL(q), "Text": h(i + 4)})

		var bar htmlw.Writer
		writeServeBar(&bar, q, h(i))
		checkSame(t, "bar", bar.Bytes(), referenceBar, "bar", map[string]any{"Query": template.URL(q), "Run": h(i)})

		if got, want := escapeAttr(h(i)+"+x+"), template.HTMLEscapeString(h(i)+"+x+"); got != want {
			t.Errorf("escapeAttr(%q) = %q, HTMLEscapeString %q", h(i), got, want)
		}
	}
}
