package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
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
	if f.FaultAtS == 0 {
		fmt.Fprintf(w, "  did not happen: %s\n", f.Problem)
		return
	}
	if f.Problem != "" {
		fmt.Fprintf(w, "  not fully measured: %s\n", f.Problem)
	}
	fmt.Fprintf(w, "  fault %.2f s into the measured time; standby promoted after %.2f s; downtime (fault to first commit on the new primary) %.3f s\n",
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

// failoverView is a run's failover on the HTML report: its events on the
// run's timeline (s since its first interval began), from the samples
// recorded as they happened and, once the run ended, its summary.
type failoverView struct {
	Events  []failoverEvent
	Planned float64 // when the fault is due (s since the first interval began); 0 once it came
	Final   *metrics.Failover
}

// failoverEvent is one moment of a failover; Name labels its line on the
// charts.
type failoverEvent struct {
	Run  int     `json:"run"`
	X    float64 `json:"x"`
	Name string  `json:"name"`
	What string  `json:"-"`
}

// Failover events, in their order.
const (
	eventFault       = "fault"
	eventPromoted    = "promoted"
	eventFirstCommit = "first commit"
	eventRecovered   = "recovered"
)

// failoverTimeline is run ri's failover view, nil when it has none.
func failoverTimeline(r *store.Run, ri int) *failoverView {
	at := map[string]time.Time{}
	var armedAt time.Time
	armed, planned := false, 0.0
	for _, s := range r.Samples {
		if s.Source != metrics.FailoverSource {
			continue
		}
		for name, v := range s.Values {
			switch name {
			case metrics.FailoverArmed:
				armed, armedAt, planned = true, s.Time, v
			case metrics.FailoverFault:
				at[eventFault] = s.Time
			case metrics.FailoverPromoted:
				at[eventPromoted] = s.Time
			case metrics.FailoverFirstCommit:
				at[eventFirstCommit] = s.Time
			}
		}
	}
	f := r.Summary.Failover
	if f == nil && !armed {
		return nil
	}
	v := &failoverView{Final: f}
	if f != nil && f.FaultAtS > 0 {
		sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
		fault, ok := at[eventFault]
		if !ok {
			fault = r.Summary.Start.Add(sec(r.Summary.WarmupS + f.FaultAtS)) // FaultAtS counts from the warm-up's end
			at[eventFault] = fault
		}
		if _, ok := at[eventPromoted]; !ok && f.PromotedS > 0 {
			at[eventPromoted] = fault.Add(sec(f.PromotedS))
		}
		if _, ok := at[eventFirstCommit]; !ok && f.DowntimeS > 0 {
			at[eventFirstCommit] = fault.Add(sec(f.DowntimeS))
		}
		if f.RecoveredS > 0 {
			at[eventRecovered] = fault.Add(sec(f.RecoveredS))
		}
	}
	if _, ok := at[eventFault]; !ok && f == nil {
		v.Planned = planned // s after the armed sample
	}
	if len(r.Intervals) == 0 {
		return v
	}
	origin := r.Intervals[0].Start
	if v.Planned != 0 {
		v.Planned += armedAt.Sub(origin).Seconds()
	}
	what := map[string]string{
		eventFault:       "fault: pgarena stopped the primary",
		eventPromoted:    "promotion: the standby left recovery",
		eventFirstCommit: "first commit on the new primary (the downtime ends)",
		eventRecovered:   "recovery: the first interval back at 90% of the median tps before the fault ended",
	}
	for _, name := range []string{eventFault, eventPromoted, eventFirstCommit, eventRecovered} {
		if t, ok := at[name]; ok {
			x := math.Round(t.Sub(origin).Seconds()*1000) / 1000
			v.Events = append(v.Events, failoverEvent{Run: ri, X: x, Name: name, What: what[name]})
		}
	}
	return v
}
