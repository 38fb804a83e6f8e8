package chbench

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/analytic"
)

// Figures implements workload.FigureReporter: TPC-C's figures as tpcc
// computes them (NOPM from the database first), with QphH beside NOPM and
// a note that the two move against each other.
//
// QphH here is CH-benCHmark's as citus-benchmark and BenchBase compute
// it: analytic queries completed in the measured window × 3600 / its
// length in seconds, which is 22 × streams × 3600 / elapsed when every
// stream ran the 22 queries once. It is not TPC-H's QphH@Size. When some
// of the 22 never completed (they failed, or the window ended before a
// stream reached them) the figure is qphh_partial, saying how many of 22
// ran: a rate over fewer, or cheaper, queries is not comparable.
func (w *Workload) Figures(win workload.FigureWindow) []workload.Figure {
	elapsed, committed := win.Elapsed, win.Committed
	tpccWin := win
	tpccWin.Committed = baseNames(committed)
	figs := w.tpcc.Figures(tpccWin)
	for i := range figs {
		// run as client groups, the types are "oltp/new_order": a figure
		// of a type (rollbacks) names it as the summary does
		if q := GroupOLTP + "/" + figs[i].Tx; figs[i].Tx != "" && hasName(committed, q) {
			figs[i].Tx = q
		}
	}
	done := Queries().Completed(committed)
	qphh := workload.Figure{Name: "qphh", Value: analytic.QphH(done, elapsed), Unit: "queries/hour",
		Note: fmt.Sprintf("CH-benCHmark QphH: %d analytic queries completed × 3600 / %.0f s (citus-benchmark's and BenchBase's definition, not TPC-H's QphH@Size); "+
			"NOPM and QphH move against each other: the streams and the TPC-C clients compete for CPU, I/O and buffers, and new orders lengthen the scans, so compare runs at the same client split",
			done, elapsed.Seconds())}
	if never := neverCompleted(committed); done > 0 && len(never) > 0 {
		qphh.Name = "qphh_partial"
		qphh.Note = fmt.Sprintf("not a full QphH: %d of %d queries completed (%s never did: failed, or not reached in the window); ",
			len(Queries())-len(never), len(Queries()), strings.Join(never, " ")) + qphh.Note
	}
	rounds := workload.Figure{Name: "olap_rounds", Value: math.Floor(float64(done)/float64(len(Queries()))*100) / 100,
		Unit: "rounds of 22 queries", Note: "over all analytic streams"}
	i := slices.IndexFunc(figs, func(f workload.Figure) bool { return f.Name == "nopm" }) + 1
	return slices.Insert(figs, i, qphh, rounds)
}

func hasName(committed map[string]int64, name string) bool {
	_, ok := committed[name]
	return ok
}

// neverCompleted are the queries, in order, that completed 0 times.
func neverCompleted(committed map[string]int64) []string {
	byName := baseNames(committed)
	var out []string
	for _, q := range Queries() {
		if byName[q.Name] == 0 {
			out = append(out, q.Name)
		}
	}
	return out
}
