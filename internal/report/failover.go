package report

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/pgarena/pgarena/internal/metrics"
)

// failoverText writes what the run's failover cost (--failover).
func failoverText(w io.Writer, s *metrics.Summary) {
	f := s.Failover
	if f == nil {
		return
	}
	repl := f.Replication
	if repl == "" {
		repl = "not listed by the primary"
	}
	fmt.Fprintf(w, "failover (%s of the primary, promotion by %s; standby %s):\n", f.Fault, f.Promotion, repl)
	if f.Problem != "" {
		fmt.Fprintf(w, "  not fully measured: %s\n", f.Problem)
	}
	if f.FaultAtS == 0 {
		return
	}
	fmt.Fprintf(w, "  fault at %.2f s; standby promoted after %.2f s; downtime (fault to first commit on the new primary) %.3f s\n",
		f.FaultAtS, f.PromotedS, f.DowntimeS)
	recovered := "never within the run"
	if f.RecoveredS > 0 {
		recovered = fmt.Sprintf("%.2f s after the fault (interval-granular)", f.RecoveredS)
	}
	fmt.Fprintf(w, "  failed transactions during the downtime: %d (%s); back to 90%% of the rate before: %s\n",
		f.FailedDuring, f.ErrorsDuring.List(), recovered)
	fmt.Fprintf(w, "  acknowledged commits lost: %d of %d (ledger); unanswered commits: %d, %d of them on the new primary\n",
		f.AckedLost, f.LedgerAcked, f.InDoubt, f.InDoubtKept)
}

// failoverCells are the CSV export's failover columns (empty without
// --failover).
func failoverCells(f *metrics.Failover) []string {
	if f == nil {
		return make([]string, 7)
	}
	return []string{f.Replication, ftoa(f.DowntimeS), ftoa(f.PromotedS), strconv.FormatInt(f.FailedDuring, 10),
		strconv.FormatInt(f.LedgerAcked, 10), strconv.FormatInt(f.AckedLost, 10), strconv.FormatInt(f.InDoubt, 10)}
}

// failoverCompare writes the failover rows of a comparison when every run
// failed over: means over each group's runs, and the total loss.
func failoverCompare(w io.Writer, groups []*Group) {
	for _, g := range groups {
		if len(g.Runs) == 0 {
			return
		}
		for _, r := range g.Runs {
			if r.Summary.Failover == nil {
				return
			}
		}
	}
	fmt.Fprintln(w, "failover (mean over runs; acknowledged commits lost: total):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "metric\t"
	for _, g := range groups {
		head += g.Name + "\t"
	}
	fmt.Fprintln(tw, head)
	rows := []struct {
		title string
		value func(*metrics.Failover) float64
		total bool
	}{
		{"downtime s", func(f *metrics.Failover) float64 { return f.DowntimeS }, false},
		{"promoted s", func(f *metrics.Failover) float64 { return f.PromotedS }, false},
		{"failed during downtime", func(f *metrics.Failover) float64 { return float64(f.FailedDuring) }, false},
		{"acked commits lost", func(f *metrics.Failover) float64 { return float64(f.AckedLost) }, true},
	}
	for _, row := range rows {
		line := row.title + "\t"
		for _, g := range groups {
			sum := 0.0
			for _, r := range g.Runs {
				sum += row.value(r.Summary.Failover)
			}
			if !row.total {
				sum /= float64(len(g.Runs))
			}
			line += fmtNum(sum) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
