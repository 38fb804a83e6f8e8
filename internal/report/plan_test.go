package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// planFixture is a 2 targets x 3 client counts x 2 repeats campaign, one
// repeat failed; one target's name probes escaping.
func planFixture(tpcc bool) *PlanData {
	d := &PlanData{Name: "fixture", File: "fixture.yaml", Axes: []string{"clients"}}
	i := 0
	for rep := 1; rep <= 2; rep++ {
		for ti, tg := range []string{"direct", "<script>alert(1)</script>"} {
			for _, c := range []int{1, 4, 16} {
				i++
				row := PlanRow{Index: i, Cell: tg + string(rune('a'+c)), CellName: tg + "/tpcb/clients=" + itoa(c), Target: tg,
					Workload: "tpcb", Axes: []string{itoa(c)}, Repeat: rep, State: "done"}
				sum := metrics.Summary{Status: "complete", Clients: c, TPS: float64(100*c*(ti+1) + rep), Transactions: 1000}
				sum.Latency.P95 = 2
				if tpcc {
					sum.Figures = []metrics.Figure{{Name: "nopm", Value: 40 * float64(c)}, {Name: "tpm", Value: 90 * float64(c)}}
				}
				if rep == 2 && c == 16 && ti == 1 {
					row.State, sum.Status, sum.StopReason = "failed", "failed", "connection refused"
				}
				row.Run = &store.Run{ID: "run-" + itoa(i), Status: sum.Status, Summary: sum,
					Spec:   store.RunSpec{PgarenaVersion: "test", Host: store.HostInfo{Hostname: "h", Cores: 2}},
					Server: &store.ServerInfo{Version: "15.18", Settings: map[string]string{"shared_buffers": "128MB"}}}
				d.Rows = append(d.Rows, row)
			}
		}
	}
	return d
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestPlanCSVOneRowPerCellAndRepeat(t *testing.T) {
	for _, tpcc := range []bool{false, true} {
		var b bytes.Buffer
		if err := PlanCSV(&b, planFixture(tpcc)); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 13 {
			t.Fatalf("%d rows, want a header and 12", len(rows))
		}
		head := strings.Join(rows[0], ",")
		if got := strings.HasSuffix(head, ",nopm,tpm"); got != tpcc || !strings.Contains(head, ",repeat,axis_clients,state,") {
			t.Errorf("tpcc %v: header %s", tpcc, head)
		}
		var j bytes.Buffer
		if err := PlanJSON(&j, planFixture(tpcc)); err != nil || !strings.Contains(j.String(), `"axis_clients": "16"`) {
			t.Errorf("json: %v\n%s", err, j.String())
		}
	}
}

func TestPlanHTMLInChromium(t *testing.T) {
	exe := chromium(t)
	out := artifactDir(t)
	allocCtx, cancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(exe), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1000, 900))
	defer cancel()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	type check struct {
		Charts, Lines, Dots, CellRows, RunRows, EnvRows int
		XSSText, Scripted                               bool
		NOPM                                            bool
	}
	const js = `(() => ({
	  charts: document.querySelectorAll("svg.plan-chart").length,
	  lines: [...document.querySelectorAll("polyline.series")].filter(p => p.getBBox().width > 100).length,
	  dots: document.querySelectorAll("svg.plan-chart circle").length,
	  cellRows: document.querySelectorAll("#plan-cells tr").length - 1,
	  runRows: document.querySelectorAll("#plan-runs tr").length - 1,
	  envRows: document.querySelectorAll("#plan-env tr").length,
	  xSSText: document.body.innerText.includes("<script>alert(1)</script>"),
	  scripted: document.scripts.length > 0,
	  nOPM: [...document.querySelectorAll("#plan-cells th")].some(th => th.textContent === "NOPM"),
	}))()`
	for _, tpcc := range []bool{false, true} {
		var b bytes.Buffer
		if err := PlanHTML(&b, planFixture(tpcc)); err != nil {
			t.Fatal(err)
		}
		html := filepath.Join(out, "plan-report.html")
		if err := os.WriteFile(html, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: html}).String())); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[check](js))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("tpcc %v: %+v", tpcc, got)
		if got.Charts != 1 || got.Lines != 2 || got.Dots != 6 || got.CellRows != 6 || got.RunRows != 12 || got.EnvRows < 4 {
			t.Errorf("tpcc %v: the page does not show one chart with two lines of 3 points, 6 cells, 12 runs: %+v", tpcc, got)
		}
		if !got.XSSText || got.Scripted || got.NOPM != tpcc {
			t.Errorf("tpcc %v: escaping or NOPM column wrong: %+v", tpcc, got)
		}
		if !strings.Contains(b.String(), "± ") {
			t.Errorf("no confidence interval in the cells table")
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
		if err == nil {
			_ = os.WriteFile(filepath.Join(out, "plan-report.png"), shot, 0o644)
		}
	}
}

// TestPlanReplicationTable: a plan whose runs have replicas draws the
// classic table (clients × systems, sustainable tps with raw tps and
// catch-up) and charts sustainable tps; a replica that did not catch up
// marks its cell as an upper bound.
func TestPlanReplicationTable(t *testing.T) {
	d := planFixture(false)
	for i := range d.Rows {
		r := &d.Rows[i]
		if r.State != "done" {
			continue
		}
		s := &r.Run.Summary
		s.Replication = &metrics.Replication{CatchUpS: 0.5, CaughtUp: true, SustainableTPS: s.TPS * 0.9}
		if r.Target == "direct" && r.Axes[0] == "16" {
			s.Replication.CaughtUp = false
		}
	}
	var b bytes.Buffer
	if err := PlanHTML(&b, d); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<table id="plan-replication">`, "Sustainable tps by clients and system",
		"<th>direct</th>", "<td class=\"num\">1</td>", "≤ 1441 (raw 1602, catch-up 0.50 s)",
		"tpcb: sustainable_tps vs clients"} {
		if !strings.Contains(html, want) {
			t.Errorf("plan report lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>alert(1)</script>") {
		t.Error("a target's name reached the page unescaped")
	}
	if tbl := planReplicationTable(planFixture(false)); tbl != nil {
		t.Errorf("a plan without replicas got a replication table: %+v", tbl)
	}
}

// TestPlanExportDrainColumns: a plan whose runs had transactions
// unfinished at the end of their measured time exports them and what
// became of them in the drain, after the other columns, in CSV and JSON;
// without any, the columns are left out.
func TestPlanExportDrainColumns(t *testing.T) {
	d := planFixture(false)
	d.Rows[0].Run.Summary.Unfinished = 4
	d.Rows[0].Run.Summary.Drain = &metrics.DrainSummary{DrainS: 10, Committed: 1, Failed: 1, Cancelled: 2}
	d.Rows[1].Run = nil // a pending cell
	var b bytes.Buffer
	if err := PlanCSV(&b, d); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if head := strings.Join(rows[0], ","); !strings.HasSuffix(head, ",unfinished,drain_s,committed_in_drain,failed_in_drain,cancelled") {
		t.Errorf("header %s", head)
	}
	tail := func(r []string) string { return strings.Join(r[len(r)-5:], ",") }
	if got := tail(rows[1]); got != "4,10,1,1,2" {
		t.Errorf("row 1's drain cells %s, want 4,10,1,1,2", got)
	}
	if got := tail(rows[2]); got != ",,,," {
		t.Errorf("a pending cell's drain cells %q, want empty", got)
	}
	if got := tail(rows[3]); got != "0,,,," {
		t.Errorf("a run without unfinished: drain cells %q, want 0 and empty", got)
	}
	var j bytes.Buffer
	if err := PlanJSON(&j, d); err != nil || !strings.Contains(j.String(), `"cancelled": 2`) {
		t.Errorf("json: %v\n%s", err, j.String())
	}
	b.Reset()
	if err := PlanCSV(&b, planFixture(false)); err != nil || strings.Contains(b.String(), "unfinished") {
		t.Errorf("a plan without unfinished transactions has their columns: %v\n%s", err, b.String())
	}
}
