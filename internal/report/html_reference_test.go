package report

import (
	"bytes"
	_ "embed"
	"html/template"
	"strconv"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/report/htmlw"
	"github.com/pgarena/pgarena/internal/store"
)

// The report was rendered by html/template from this template; the pages
// are now written by hand (html_render.go), and every page the tests
// render is compared with what the template gives for the same data.

//go:embed testdata/templates/report.html.tmpl
var referenceReportText string

var referenceReport = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms":  func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"num": fmtNum,
	"rel": fmtRel,
	"int": func(v int64) string { return strconv.FormatInt(v, 10) },
	"inc": func(i int) int { return i + 1 },
}).Parse(referenceReportText))

// referencePage is page with the assets the template took as fields.
type referencePage struct {
	*page
	UplotJS   template.JS
	UplotCSS  template.CSS
	ReportJS  template.JS
	ReportCSS template.CSS
}

// checkReference fails t when got is not what html/template renders for runs.
func checkReference(t testing.TB, runs []*store.Run, got []byte) {
	t.Helper()
	var want bytes.Buffer
	p := referencePage{buildPage(runs), template.JS(uplotJS), template.CSS(uplotCSS), template.JS(reportJS), template.CSS(reportCSS)}
	if err := referenceReport.Execute(&want, p); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the page differs from html/template's at byte %d:\n got: %q\nwant: %q", firstDiff(got, want.Bytes()),
			around(got, firstDiff(got, want.Bytes())), around(want.Bytes(), firstDiff(got, want.Bytes())))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(b []byte, i int) []byte { return b[max(0, i-150):min(len(b), i+150)] }

// hostile are values a run may carry that must not become markup, script
// or a link: tags, quotes, a javascript: URL, U+2028, NUL.
var hostileValues = []string{"<script>alert(1)</script>", `"'&+<b>`, "javascript:alert(1)", "a\u2028b\u2029c", "</script><script>x()</script>", "nul\x00end", "x;} body{color:red"}

// makeHostile puts hostile values in every string of runs the page shows.
func makeHostile(runs []*store.Run) {
	for i, r := range runs {
		h := func(k int) string { return hostileValues[(i+k)%len(hostileValues)] }
		r.ID, r.Spec.Label, r.Spec.Target, r.Status = h(0)+r.ID, h(1), h(2), h(3)
		r.Spec.CommandLine = []string{h(4), h(5)}
		r.Spec.SessionSettings = []string{h(6)}
		r.Spec.Params = map[string]string{h(0): h(1)}
		r.Spec.Host.Hostname = h(2)
		r.Server = &store.ServerInfo{Version: h(3), Settings: map[string]string{"work_mem": h(4), h(5): h(6)}}
		r.Findings = append(r.Findings, store.Finding{Severity: store.SeverityWarning, Message: h(0)})
		s := &r.Summary
		s.StopReason, s.QueryMode, s.Workload = h(1), h(2), h(3)
		s.Figures = append(s.Figures, metrics.Figure{Name: h(4), Value: 1.5, Unit: h(5), Tx: h(6)})
		s.ErrorAdvice = map[string]string{pgerr.ClassSerialization.String(): h(0)}
		for j := range s.Tx {
			s.Tx[j].Name = h(j)
			s.Tx[j].Statements = []metrics.StatementSummary{{Command: h(j + 1), Count: 3, AvgMS: 1.25}}
		}
		s.Replication = &metrics.Replication{Replicas: []metrics.ReplicaLag{{Name: h(2), LagMaxS: 0.5}}, SustainableTPS: 9}
		s.Failover = &metrics.Failover{FaultAtS: 3, DowntimeS: 1.5, Replication: h(3), Problem: h(4), AckedLost: 1}
		s.Steps = []metrics.StepSummary{{Step: 1, Clients: 2, Rate: 50, Status: h(5), StopReason: h(6)}}
		r.Spec.Load = map[string]string{"autostop": "p95 > 100ms for 10s"}
	}
}

func TestHTMLSameAsTemplate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		hostile bool
	}{{"fixtures", false}, {"hostile", true}} {
		t.Run(tc.name, func(t *testing.T) {
			runs := fixtureRuns(t)
			if tc.hostile {
				makeHostile(runs)
			}
			for _, sel := range [][]*store.Run{runs[:1], runs[7:9], runs} {
				h := renderHTML(t, sel) // compares with the template
				if tc.hostile && strings.Contains(h, "<script>alert") {
					t.Error("a hostile value reached the page unescaped")
				}
			}
		})
	}
}

// TestHTMLBranchesSameAsTemplate renders pages whose runs take both sides
// of every choice the page makes (caught up or not, a fired limit, mins,
// failure advice, a due fault...), with hostile values, and compares them
// with the template.
func TestHTMLBranchesSameAsTemplate(t *testing.T) {
	t.Parallel()
	for _, flip := range []bool{false, true} {
		runs := fixtureRuns(t)
		makeHostile(runs)
		p := buildPage(runs)
		p.HasServer, p.HasHost, p.HasPooler, p.HasSteps = flip, flip, flip, flip
		p.HasFailureText, p.HasStatements, p.HasFailover, p.HasReplication = flip, flip, flip, flip
		if flip {
			p.Data.Note, p.Data.Warmup = hostileValues[0], nil
		}
		for i := range p.Runs {
			v := &p.Runs[i]
			odd := (i%2 == 1) != flip
			h := func(k int) string { return hostileValues[(i+k)%len(hostileValues)] }
			pick := func(s string) string {
				if odd {
					return s
				}
				return ""
			}
			num := func(x float64) float64 {
				if odd {
					return x
				}
				return 0
			}
			v.Note, v.Interrupted, v.Label = pick(h(0)), odd, pick(h(1))
			if odd {
				v.Name = v.ID
			}
			s := &v.Summary
			s.WarmupS, s.Failed = num(5), int64(num(3))
			v.Limits = &LoadLimits{Rule: h(2), Fired: odd, Reached: 12.5, Held: num(7.25)}
			if i%3 == 2 {
				v.Limits = nil
			}
			s.Replication = &metrics.Replication{CaughtUp: odd, CatchUpS: 2.5, SustainableTPS: 9.5, SustainableRatio: 0.75,
				Replicas: []metrics.ReplicaLag{{Name: h(3), Kind: h(4), CaughtUp: odd, CatchUpS: 1}, {Name: h(5), CaughtUp: !odd}}}
			s.Failover = &metrics.Failover{FaultAtS: 3, DowntimeS: 1.5, AckedLost: int64(num(2)), LedgerAcked: 40, Replication: pick(h(6))}
			v.Failover = &failoverView{Planned: num(2.5), Events: []failoverEvent{{X: 3, What: h(0)}, {X: 4.5, What: h(1)}},
				Final: &metrics.Failover{FaultAtS: num(3), DowntimeS: 1.5, PromotedS: 0.5, FailedDuring: 4, RecoveredS: num(6),
					AckedLost: 1, LedgerAcked: 40, Replication: []string{h(2), ""}[i/2%2], Problem: pick(h(3))}}
			switch i % 3 {
			case 1:
				v.Failover.Events, v.Failover.Final = nil, nil
			case 2:
				v.Failover, s.Replication, s.Failover = nil, nil, nil
			}
			v.Failures = []failureRow{{Class: h(0), Tx: h(1), When: h(2), SQLState: h(3), Text: h(4), Failed: 2}}
			v.Advice = []kv{{h(5), h(6)}}
			v.Mins = nil
			if odd {
				v.Failures, v.Advice = v.Failures[:0], nil
				v.Mins = map[string]float64{}
				for j, tx := range s.Tx {
					v.Mins[tx.Name] = float64(j % 2)
				}
			}
			s.Steps = []metrics.StepSummary{{Step: 1, Clients: 2, Rate: num(50), Status: h(5), StopReason: pick(h(6))},
				{Step: 2, Clients: 4, Rate: 0, Status: h(0)}}
			if i%3 == 1 {
				s.Steps = nil
			}
			if odd && len(s.Tx) > 0 {
				v.Settings, s.Tx[0].Statements = nil, nil
			}
		}
		for i := range p.Data.Charts {
			p.Data.Charts[i].Anchor = []string{"", hostileValues[i%len(hostileValues)]}[i%2]
		}
		var got htmlw.Writer
		if err := p.render(&got); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		ref := referencePage{p, template.JS(uplotJS), template.CSS(uplotCSS), template.JS(reportJS), template.CSS(reportCSS)}
		if err := referenceReport.Execute(&want, ref); err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(got.Bytes(), want.Bytes()); i != got.Len() || got.Len() != want.Len() {
			t.Fatalf("flip %v: the page differs from html/template's at byte %d:\n got: %q\nwant: %q", flip, i,
				around(got.Bytes(), i), around(want.Bytes(), i))
		}
	}
}
