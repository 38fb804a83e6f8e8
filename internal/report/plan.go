package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pgarena/pgarena/internal/report/htmlw"
	"github.com/pgarena/pgarena/internal/store"
)

// PlanData is a plan (campaign) and its runs: one row per cell and repeat,
// in the plan's order. The caller (cli, from internal/plan) fills it.
type PlanData struct {
	Name string
	File string
	Axes []string // matrix axis names: the columns of PlanRow.Axes
	Rows []PlanRow
}

// PlanRow is one repeat of one cell.
type PlanRow struct {
	Index    int
	Cell     string // stable id
	CellName string
	Target   string
	Workload string
	Axes     []string // values, by PlanData.Axes
	Repeat   int
	State    string     // done, running, failed, pending
	Run      *store.Run // the run that decided State; nil when none finished
}

// figure returns the run's figure of merit named name (nopm, tpm), or its
// replicas' sustainable_tps.
func (r *PlanRow) figure(name string) (float64, bool) {
	if r.Run == nil {
		return 0, false
	}
	if name == "sustainable_tps" {
		if rp := r.Run.Summary.Replication; rp != nil {
			return rp.SustainableTPS, true
		}
		return 0, false
	}
	for _, f := range r.Run.Summary.Figures {
		if f.Name == name && f.Tx == "" {
			return f.Value, true
		}
	}
	return 0, false
}

// hasFigure reports whether any row has the figure (TPC-C runs).
func (d *PlanData) hasFigure(name string) bool {
	for i := range d.Rows {
		if _, ok := d.Rows[i].figure(name); ok {
			return true
		}
	}
	return false
}

// PlanCSVColumns are the fixed columns of the plan export; the matrix axes
// follow "repeat" (one column each, named axis_NAME), nopm, tpm follow
// when a run has them (TPC-C), and PlanReplicationColumns close the row
// when a run has replicas.
var PlanCSVColumns = []string{"plan", "index", "cell", "cell_name", "target", "workload", "repeat",
	"state", "run_id", "status", "clients", "duration_s", "transactions", "failed", "tps",
	"lat_avg_ms", "lat_p50_ms", "lat_p95_ms", "lat_p99_ms", "target_rate"}

// PlanReplicationColumns are the replicas' columns of the plan export:
// catch_up_s is a lower and sustainable_tps an upper bound when caught_up
// is false (sustainable_upper_bound true).
var PlanReplicationColumns = []string{"catch_up_s", "caught_up", "sustainable_tps", "sustainable_upper_bound"}

// PlanFailoverColumns are a failover's columns of the plan export
// (--failover): the standby's sync state, the downtime, and the ledger's
// acknowledged commits lost and acknowledged.
var PlanFailoverColumns = []string{"failover_replication", "failover_downtime_s", "failover_acked_lost", "failover_ledger_acked"}

// PlanDrainColumns are the plan export's columns of the transactions
// still running when a run's measured time ended, named as in the run
// export; they close the row when a run had some.
var PlanDrainColumns = []string{"unfinished", "drain_s", "committed_in_drain", "failed_in_drain", "cancelled"}

// hasUnfinished reports whether any row's run had transactions unfinished.
func (d *PlanData) hasUnfinished() bool {
	for i := range d.Rows {
		if r := d.Rows[i].Run; r != nil && r.Summary.Unfinished > 0 {
			return true
		}
	}
	return false
}

// hasFailover reports whether any row's run failed over.
func (d *PlanData) hasFailover() bool {
	for i := range d.Rows {
		if r := d.Rows[i].Run; r != nil && r.Summary.Failover != nil {
			return true
		}
	}
	return false
}

// hasReplication reports whether any row's run has replicas.
func (d *PlanData) hasReplication() bool {
	for i := range d.Rows {
		if r := d.Rows[i].Run; r != nil && r.Summary.Replication != nil {
			return true
		}
	}
	return false
}

// PlanCSV writes one row per cell and repeat.
func PlanCSV(w io.Writer, d *PlanData) error {
	cw := newSafeCSV(w)
	head, figs := planHeader(d)
	if err := cw.Write(head); err != nil {
		return err
	}
	for i := range d.Rows {
		if err := cw.Write(planCSVRow(d, &d.Rows[i], figs)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func planHeader(d *PlanData) (head, figs []string) {
	head = slices.Clone(PlanCSVColumns[:7])
	for _, a := range d.Axes {
		head = append(head, "axis_"+a)
	}
	head = append(head, PlanCSVColumns[7:]...)
	for _, f := range []string{"nopm", "tpm"} {
		if d.hasFigure(f) {
			figs = append(figs, f)
		}
	}
	head = append(head, figs...)
	if d.hasReplication() {
		head = append(head, PlanReplicationColumns...)
	}
	if d.hasFailover() {
		head = append(head, PlanFailoverColumns...)
	}
	if d.hasUnfinished() {
		head = append(head, PlanDrainColumns...)
	}
	return head, figs
}

func planCSVRow(d *PlanData, r *PlanRow, figs []string) []string {
	row := []string{d.Name, strconv.Itoa(r.Index), r.Cell, r.CellName, r.Target, r.Workload, strconv.Itoa(r.Repeat)}
	row = append(row, r.Axes...)
	row = append(row, r.State)
	repl := d.hasReplication()
	if r.Run == nil {
		row = append(row, make([]string, len(PlanCSVColumns)-8+len(figs))...)
		if repl {
			row = append(row, make([]string, len(PlanReplicationColumns))...)
		}
		if d.hasFailover() {
			row = append(row, make([]string, len(PlanFailoverColumns))...)
		}
		if d.hasUnfinished() {
			row = append(row, make([]string, len(PlanDrainColumns))...)
		}
		return row
	}
	s := &r.Run.Summary
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	row = append(row, r.Run.ID, r.Run.Status, strconv.Itoa(s.Clients), f(s.DurationS),
		strconv.FormatInt(s.Transactions, 10), strconv.FormatInt(s.Failed, 10), f(s.TPS),
		f(s.Latency.Avg), f(s.Latency.P50), f(s.Latency.P95), f(s.Latency.P99), optRate(s.TargetRate))
	for _, name := range figs {
		v, ok := r.figure(name)
		row = append(row, map[bool]string{true: f(v)}[ok])
	}
	if repl {
		if rp := s.Replication; rp != nil {
			row = append(row, f(rp.CatchUpS), strconv.FormatBool(rp.CaughtUp), f(rp.SustainableTPS), strconv.FormatBool(rp.SustainableUpperBound))
		} else {
			row = append(row, make([]string, len(PlanReplicationColumns))...)
		}
	}
	if d.hasFailover() {
		if fo := s.Failover; fo != nil {
			row = append(row, fo.Replication, f(fo.DowntimeS), strconv.FormatInt(fo.AckedLost, 10), strconv.FormatInt(fo.LedgerAcked, 10))
		} else {
			row = append(row, make([]string, len(PlanFailoverColumns))...)
		}
	}
	if d.hasUnfinished() {
		row = append(row, drainCells(s.Unfinished, s.Drain)...)
	}
	return row
}

func optRate(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// PlanJSON writes the rows as a JSON array of objects keyed as the CSV
// header (numbers as numbers where the CSV has numbers).
func PlanJSON(w io.Writer, d *PlanData) error {
	head, figs := planHeader(d)
	out := make([]map[string]any, 0, len(d.Rows))
	for i := range d.Rows {
		vals := planCSVRow(d, &d.Rows[i], figs)
		m := map[string]any{}
		for j, h := range head {
			m[h] = jsonValue(h, vals[j])
		}
		out = append(out, m)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// jsonValue turns the CSV text of a numeric column into a number; empty
// numbers are null.
func jsonValue(col, v string) any {
	switch col {
	case "plan", "cell", "cell_name", "target", "workload", "state", "run_id", "status", "failover_replication":
		return v
	}
	if strings.HasPrefix(col, "axis_") {
		return v
	}
	if v == "" {
		return nil
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return n
	}
	if b, err := strconv.ParseBool(v); err == nil {
		return b
	}
	return v
}

// planCell is one cell over its repeats: the table row of the report.
type planCell struct {
	Name, Target, Workload string
	Axes                   []string
	Runs, Failed           int
	TPS, P95, Figure       Estimate
}

// planCells groups the rows by cell, in the plan's order of first
// appearance; means and 95% intervals over the repeats that are done.
func planCells(d *PlanData, figure string) []planCell {
	var order []string
	by := map[string]*planCell{}
	vals := map[string][3][]float64{}
	for i := range d.Rows {
		r := &d.Rows[i]
		c, ok := by[r.Cell]
		if !ok {
			c = &planCell{Name: r.CellName, Target: r.Target, Workload: r.Workload, Axes: r.Axes}
			by[r.Cell] = c
			order = append(order, r.Cell)
		}
		if r.State == "failed" {
			c.Failed++
		}
		if r.State != "done" || r.Run == nil {
			continue
		}
		c.Runs++
		v := vals[r.Cell]
		v[0] = append(v[0], r.Run.Summary.TPS)
		v[1] = append(v[1], r.Run.Summary.Latency.P95)
		if fv, ok := r.figure(figure); ok {
			v[2] = append(v[2], fv)
		}
		vals[r.Cell] = v
	}
	out := make([]planCell, 0, len(order))
	for _, id := range order {
		c := by[id]
		v := vals[id]
		c.TPS, c.P95, c.Figure = MeanCI(v[0]), MeanCI(v[1]), MeanCI(v[2])
		out = append(out, *c)
	}
	return out
}

// fmtEstimate writes a mean and its 95% confidence interval.
func fmtEstimate(e Estimate) string {
	switch {
	case e.N == 0 || math.IsNaN(e.Mean):
		return "–"
	case math.IsNaN(e.Half):
		return fmt.Sprintf("%.1f", e.Mean)
	}
	return fmt.Sprintf("%.1f ± %.1f", e.Mean, e.Half)
}

// planPage is what plan_render.go writes.
// planPage is what the template renders.
type planPage struct {
	*PlanData
	Metric      string // tps, nopm, or sustainable_tps (runs with replicas)
	Cells       []planCell
	Replication *replicationTable // runs with replicas: sustainable tps, clients × systems
	Charts      []svgChart
	Environment []envLine
	Counts      map[string]int
}

type envLine struct{ Key, Value string }

// PlanHTML renders the plan's report: the headline metric (NOPM for TPC-C,
// sustainable tps for runs with replicas, else TPS) against the first
// numeric axis, one chart per workload with a
// line per target (and other axis values); a table of every cell with the
// mean and 95% confidence interval over its repeats; the environment.
func PlanHTML(w io.Writer, d *PlanData) error {
	var b htmlw.Writer
	newPlanPage(d).render(&b)
	_, err := w.Write(b.Bytes())
	return err
}

func newPlanPage(d *PlanData) *planPage {
	pg := &planPage{PlanData: d, Metric: "tps", Counts: map[string]int{}}
	switch {
	case d.hasFigure("nopm"):
		pg.Metric = "nopm"
	case d.hasReplication():
		pg.Metric = "sustainable_tps"
		pg.Replication = planReplicationTable(d)
	}
	pg.Cells = planCells(d, pg.Metric)
	pg.Charts = planCharts(d, pg.Cells, pg.Metric)
	pg.Environment = planEnvironment(d)
	for _, r := range d.Rows {
		pg.Counts[r.State]++
	}
	return pg
}

// planEnvironment lists what the campaign ran on: pgarena versions, client
// hosts, and each target's server version.
func planEnvironment(d *PlanData) []envLine {
	seen := map[string]bool{}
	var out []envLine
	add := func(k, v string) {
		if v != "" && !seen[k+"\x00"+v] {
			seen[k+"\x00"+v] = true
			out = append(out, envLine{k, v})
		}
	}
	add("plan file", d.File)
	for _, r := range d.Rows {
		if r.Run == nil {
			continue
		}
		sp := &r.Run.Spec
		add("pgarena", sp.PgarenaVersion)
		h := sp.Host
		if h.Hostname != "" {
			add("client host", fmt.Sprintf("%s: %d cores, %.1f GiB, %s, %s", h.Hostname, h.Cores,
				float64(h.MemoryBytes)/(1<<30), h.OS, h.Kernel))
		}
		if r.Run.Server != nil {
			add("server of "+r.Target, r.Run.Server.Version)
			for _, k := range []string{"shared_buffers", "max_connections", "synchronous_commit"} {
				if v, ok := r.Run.Server.Settings[k]; ok {
					add(k+" on "+r.Target, v)
				}
			}
		}
	}
	return out
}
