package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/store"
)

// fixtureRuns writes reporttest.Standard runs and loads them, oldest first.
func fixtureRuns(t testing.TB) []*store.Run {
	t.Helper()
	return loadFixtures(t, reporttest.Standard()...)
}

func renderHTML(t testing.TB, runs []*store.Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, runs); err != nil {
		t.Fatal(err)
	}
	checkReference(t, runs, b.Bytes())
	if dir := os.Getenv("PGARENA_REPORT_OUT"); dir != "" { // to look at it
		_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".html"), b.Bytes(), 0o644)
	}
	return b.String()
}

func TestHTMLSelfContainedAndEscaped(t *testing.T) {
	t.Parallel()
	runs := fixtureRuns(t)
	xss := runs[8]
	if xss.Spec.Label != "<script>alert(1)</script>" {
		t.Fatalf("fixture 8 label %q", xss.Spec.Label)
	}
	for _, tc := range []struct {
		name string
		runs []*store.Run
	}{{"one", []*store.Run{xss}}, {"several", []*store.Run{runs[0], runs[3], runs[7], xss}}} {
		t.Run(tc.name, func(t *testing.T) {
			h := renderHTML(t, tc.runs)
			if strings.Contains(h, "<script>alert(1)") {
				t.Error("the label's <script> reached the page unescaped")
			}
			if !strings.Contains(h, "&lt;script&gt;alert(1)&lt;/script&gt;") {
				t.Error("the label does not appear escaped as text")
			}
			if !strings.Contains(h, `\u003cscript\u003ealert(1)\u003c/script\u003e`) {
				t.Error("the label does not appear escaped in the chart data")
			}
			// Nothing is fetched: no external scripts, styles, images or
			// imports; and every template value was accepted (ZgotmplZ).
			for _, bad := range []string{"ZgotmplZ", "<link", " src=", `href="http`, "url(http", "@import"} {
				if strings.Contains(h, bad) {
					t.Errorf("report contains %q: it must be self-contained and fully rendered", bad)
				}
			}
			if n := strings.Count(h, "<script"); n != 3 {
				t.Errorf("%d script elements, want 3 (data, uPlot, report)", n)
			}
			for _, want := range []string{"Throughput", "Latency: a", "Latency: b",
				"Failed transactions per interval", "Connected clients", "Environment", "shared_buffers", "PostgreSQL 16.4"} {
				if !strings.Contains(h, want) {
					t.Errorf("report lacks %q", want)
				}
			}
			for _, want := range []string{`<section id="failures">`, "40P01", "deadlock detected", "See server log for query details."} {
				if !strings.Contains(h, want) {
					t.Errorf("report lacks what the failures said: %q", want)
				}
			}
			if tc.name == "several" {
				for _, want := range []string{`id="comparison-table"`, "interrupted: pgarena stopped", "baseline"} {
					if !strings.Contains(h, want) {
						t.Errorf("several runs: report lacks %q", want)
					}
				}
			}
		})
	}
}

// A run that died before its first tick still gets a report.
func TestHTMLRunWithoutIntervals(t *testing.T) {
	t.Parallel()
	r := &store.Run{ID: "20261122-031512-tpcb", Status: "interrupted", Spec: store.RunSpec{Workload: "tpcb", Label: "early"}}
	h := renderHTML(t, []*store.Run{r})
	if !strings.Contains(h, "interrupted: pgarena stopped") {
		t.Error("not marked interrupted")
	}
	if _, err := PNGs([]*store.Run{r}); err != nil {
		t.Errorf("PNGs: %v", err)
	}
}
