package report

import (
	_ "embed"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/report/htmlw"
	"github.com/pgarena/pgarena/internal/store"
)

var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.css
	reportCSS string
)

// HTML writes one self-contained HTML report of runs: styles, scripts
// (uPlot) and data are inline, so the file opens anywhere without network.
// With several runs their series are overlaid on elapsed time and a
// comparison table (against the first run) is added. Every string that
// comes from a run (labels, parameters, settings, command lines) is escaped
// for its context (htmlw), in the page and in the embedded data.
func HTML(w io.Writer, runs []*store.Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("report: no runs")
	}
	var b htmlw.Writer
	if err := buildPage(runs).render(&b); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// page is what html_render.go writes.
type page struct {
	Title          string
	Runs           []runView
	Compare        []compareRow // several runs only
	Data           chartSet     // embedded as JSON for report.js
	HasServer      bool         // sampled server series are charted
	HasHost        bool         // sampled host series are charted
	HasPooler      bool         // sampled pooler series are charted
	HasFailureText bool         // some run kept what its failures said
	HasSteps       bool         // a run is a sweep: its steps are charted and tabled
	HasStatements  bool         // a run has per-statement figures (-r)
	HasFailover    bool         // a run fails over (--failover): its timeline
	HasReplication bool         // a run measured replicas: lag, catch-up, sustainable tps
}

type runView struct {
	Index       int
	Name        string
	ID          string
	Label       string
	Status      string
	Interrupted bool
	Note        string
	Findings    []store.Finding // warnings and worse from the samplers
	Color       string
	Failures    []failureRow // what the failures said
	Advice      []kv         // per failed class with advice: what to do
	Summary     metrics.Summary
	// Mins is each type's shortest latency in ms (the per-type "min"
	// figures, tpch); nil when the run has none.
	Mins        map[string]float64
	Limits      *LoadLimits // open loop on a schedule with autostop
	Failover    *failoverView
	Target      string
	Env         []kv
	KeySettings []kv
	Settings    []kv
}

type kv struct{ K, V string }

// failureRow is one failure's text: the first or last of a class and
// transaction type (one row when both said the same).
type failureRow struct {
	Class, Tx, When, SQLState, Text string
	Failed                          int64 // of this class and type in the run
}

// failureRows lists, per class (largest first) and transaction type, what
// the first and last failure said, and the advice of the classes that have
// one.
func failureRows(s *metrics.Summary) ([]failureRow, []kv) {
	var rows []failureRow
	var advice []kv
	for _, c := range (&s.Errors).BySize() {
		for _, t := range s.Tx {
			ex, ok := t.ErrorExamples.Get(c)
			if !ok {
				continue
			}
			row := func(when string, d pgerr.ErrorDetail) failureRow {
				text := DetailText(pgerr.ErrorDetail{Message: d.Message, Detail: d.Detail, Hint: d.Hint})
				if d.Severity != "" {
					text = d.Severity + ": " + text
				}
				return failureRow{Class: c.String(), Tx: t.Name, When: when, SQLState: d.SQLState, Text: text, Failed: t.Errors[c]}
			}
			if ex.SameText() {
				rows = append(rows, row("first "+sinceStart(s, ex.First.Time)+", last "+sinceStart(s, ex.Last.Time), ex.First))
				continue
			}
			rows = append(rows, row("first "+sinceStart(s, ex.First.Time), ex.First), row("last "+sinceStart(s, ex.Last.Time), ex.Last))
		}
		if a := s.ErrorAdvice[c.String()]; a != "" {
			advice = append(advice, kv{c.String(), a})
		}
	}
	return rows, advice
}

type compareRow struct {
	Name, Status, Color     string
	TPS, P50, P95, P99, Max float64
	TPSRel, P95Rel, P99Rel  float64
	Failed                  int64
	DurationS               float64
	Clients                 int
	Baseline                bool
}

// palette colours runs (and, in a single-run report, series).
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// keySettings are the server settings shown up front; all are listed below.
var keySettings = []string{"shared_buffers", "max_connections", "work_mem", "effective_cache_size", "maintenance_work_mem",
	"synchronous_commit", "fsync", "full_page_writes", "wal_level", "max_wal_size", "checkpoint_timeout",
	"random_page_cost", "effective_io_concurrency", "huge_pages", "jit", "max_parallel_workers_per_gather"}

func runName(r *store.Run) string {
	if r.Spec.Label != "" {
		return r.Spec.Label
	}
	return r.ID
}

// runNames names each run by its label, or its id when it has none; a
// label that several runs share gets the id added.
func runNames(runs []*store.Run) []string {
	count := map[string]int{}
	for _, r := range runs {
		count[runName(r)]++
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = runName(r)
		if count[names[i]] > 1 && names[i] != r.ID {
			names[i] += " (" + r.ID + ")"
		}
	}
	return names
}

func buildPage(runs []*store.Run) *page {
	p := &page{}
	names := runNames(runs)
	if len(runs) == 1 {
		p.Title = "pgarena: " + runs[0].Spec.Workload + " " + names[0]
	} else {
		p.Title = fmt.Sprintf("pgarena: %d runs compared", len(runs))
	}
	for i, r := range runs {
		p.Runs = append(p.Runs, newRunView(i, names[i], r))
		p.HasFailureText = p.HasFailureText || len(p.Runs[i].Failures) > 0
		p.HasReplication = p.HasReplication || r.Summary.Replication != nil
		for _, t := range p.Runs[i].Summary.Tx {
			p.HasStatements = p.HasStatements || len(t.Statements) > 0
		}
	}
	if len(runs) > 1 {
		b := &runs[0].Summary
		for i, r := range runs {
			s := &r.Summary
			p.Compare = append(p.Compare, compareRow{Name: names[i], Status: r.Status, Color: palette[i%len(palette)],
				TPS: s.TPS, P50: s.Latency.P50, P95: s.Latency.P95, P99: s.Latency.P99, Max: s.Latency.Max,
				TPSRel: relTo(s.TPS, b.TPS), P95Rel: relTo(s.Latency.P95, b.Latency.P95), P99Rel: relTo(s.Latency.P99, b.Latency.P99),
				Failed: s.Failed, DurationS: s.DurationS, Clients: r.Spec.Clients, Baseline: i == 0})
		}
	}
	p.Data = buildCharts(runs, names)
	for i := range p.Runs {
		if fv := p.Runs[i].Failover; fv != nil {
			p.HasFailover = true
			p.Data.Events = append(p.Data.Events, fv.Events...)
		}
	}
	for _, c := range p.Data.Charts {
		p.HasServer = p.HasServer || c.Section == "server"
		p.HasHost = p.HasHost || c.Section == "host"
		p.HasPooler = p.HasPooler || c.Section == "pooler"
		p.HasSteps = p.HasSteps || c.Section == "steps"
	}
	return p
}

func relTo(v, base float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return (v - base) / base
}

func newRunView(i int, name string, r *store.Run) runView {
	v := runView{Index: i, Name: name, ID: r.ID, Label: r.Spec.Label, Status: r.Status, Color: palette[i%len(palette)],
		Summary: r.Summary, Target: r.Spec.Target}
	v.Failures, v.Advice = failureRows(&r.Summary)
	for _, f := range r.Summary.Figures {
		if f.Tx != "" && f.Name == "min" {
			if v.Mins == nil {
				v.Mins = map[string]float64{}
			}
			v.Mins[f.Tx] = f.Value
		}
	}
	v.Failover = failoverTimeline(r, i)
	if l, ok := RunLoadLimits(r); ok {
		v.Limits = &l
	}
	for _, f := range r.Findings {
		if f.Severity != store.SeverityInfo {
			v.Findings = append(v.Findings, f)
		}
	}
	switch r.Status {
	case metrics.StatusInterrupted:
		v.Interrupted = true
		v.Note = "interrupted: pgarena stopped without finishing this run; the report shows the intervals it recorded"
	case metrics.StatusRunning:
		v.Interrupted = true
		v.Note = "still running: the report shows the intervals recorded so far"
	}
	if r.Truncated {
		v.Note = strings.TrimSpace(v.Note + " (the last interval line was torn and is ignored)")
	}
	sp := &r.Spec
	h := &sp.Host
	v.Env = []kv{
		{"run", r.ID},
		{"created", sp.Created.UTC().Format(time.RFC3339)},
		{"workload", sp.Workload},
		{"parameters", paramString(sp.Params)},
		{"clients / threads", fmt.Sprintf("%d / %d", sp.Clients, sp.Threads)},
		{"query mode", sp.QueryMode},
		{"seed", strconv.FormatInt(sp.Seed, 10)},
		{"target", sp.Target},
		{"embedded cluster", strconv.FormatBool(sp.Embedded)},
		{"pgarena", sp.PgarenaVersion},
		{"client host", fmt.Sprintf("%s: %d cores, %.1f GiB, %s, %s %s, %s", h.Hostname, h.Cores, float64(h.MemoryBytes)/(1<<30), h.OS, h.Kernel, h.Arch, h.GoVersion)},
		{"command line", strings.Join(sp.CommandLine, " ")},
	}
	if len(sp.SessionSettings) > 0 {
		v.Env = append(v.Env, kv{"session settings", strings.Join(sp.SessionSettings, ", ")})
	}
	if r.Server != nil {
		v.Env = append(v.Env, kv{"server", r.Server.Version})
		if r.Server.Citus != nil {
			for _, l := range r.Server.Citus.Lines() {
				v.Env = append(v.Env, kv{"citus", strings.TrimPrefix(l, "citus: ")})
			}
		}
		for _, k := range keySettings {
			if val, ok := r.Server.Settings[k]; ok {
				v.KeySettings = append(v.KeySettings, kv{k, val})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(r.Server.Settings)) {
			v.Settings = append(v.Settings, kv{k, r.Server.Settings[k]})
		}
	}
	return v
}
