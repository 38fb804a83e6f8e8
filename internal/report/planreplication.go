package report

import (
	"fmt"
	"slices"
	"strconv"
)

// Replication systems compared by a plan (examples/replication-systems.yaml):
// the table of the classic comparison, one row per value of the chart's
// axis (clients), one column per target (system), each cell the
// sustainable throughput, transactions / (run time + catch-up), with the
// raw tps and the catch-up beside it; "≤" where a replica did not catch up
// (the figure is then an upper bound).

// replicationTable is that table, written by plan_render.go.
type replicationTable struct {
	Axis    string
	Columns []string
	Rows    []replicationRow
}

type replicationRow struct {
	Key   string
	Cells []string
}

// planReplicationTable builds the table, or nil when the plan's runs have
// no replicas or no numeric axis.
func planReplicationTable(d *PlanData) *replicationTable {
	xi := chartAxis(d)
	if xi < 0 || !d.hasReplication() {
		return nil
	}
	type acc struct {
		sust, tps, catch []float64
		bound            bool
	}
	cells := map[[2]string]*acc{}
	var cols, keys []string
	for i := range d.Rows {
		r := &d.Rows[i]
		if r.State != "done" || r.Run == nil || r.Run.Summary.Replication == nil {
			continue
		}
		col := seriesName(d, planCell{Target: r.Target, Axes: r.Axes}, xi)
		key := r.Axes[xi]
		if !slices.Contains(cols, col) {
			cols = append(cols, col)
		}
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
		a := cells[[2]string{key, col}]
		if a == nil {
			a = &acc{}
			cells[[2]string{key, col}] = a
		}
		rp := r.Run.Summary.Replication
		a.sust = append(a.sust, rp.SustainableTPS)
		a.tps = append(a.tps, r.Run.Summary.TPS)
		a.catch = append(a.catch, rp.CatchUpS)
		a.bound = a.bound || !rp.CaughtUp
	}
	slices.SortStableFunc(keys, func(a, b string) int {
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		return compareFloat(x, y)
	})
	t := &replicationTable{Axis: d.Axes[xi], Columns: cols}
	for _, k := range keys {
		row := replicationRow{Key: k}
		for _, c := range cols {
			a := cells[[2]string{k, c}]
			if a == nil {
				row.Cells = append(row.Cells, "–")
				continue
			}
			le := ""
			if a.bound {
				le = "≤ "
			}
			row.Cells = append(row.Cells, fmt.Sprintf("%s%.0f (raw %.0f, catch-up %.2f s)",
				le, mean(a.sust), mean(a.tps), mean(a.catch)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func compareFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
