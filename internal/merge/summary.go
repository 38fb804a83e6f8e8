package merge

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// summarize computes the merged run's summary from the merged intervals
// (as store computes an interrupted run's) and the sources' summaries.
func summarize(runs []*store.Run, ivs []metrics.Interval, label string) (metrics.Summary, string) {
	first := runs[0]
	sum := metrics.Summary{Status: metrics.StatusComplete, Workload: first.Spec.Workload, Label: label,
		QueryMode: first.Spec.QueryMode, Params: first.Spec.Params, MaxTries: first.Spec.MaxTries}
	if n := len(ivs); n > 0 {
		sum.Start, sum.End = ivs[0].Start, ivs[n-1].End
	}
	acc := accumulate(ivs)
	acc.Fill(&sum)
	var connectMS float64
	for _, r := range runs {
		s := &r.Summary
		sum.Clients += r.Spec.Clients
		sum.Threads += r.Spec.Threads
		sum.Reconnects += s.Reconnects
		sum.Unstarted += s.Unstarted
		sum.NotConnected += s.NotConnected
		connectMS = max(connectMS, s.InitialConnectMS)
		if s.Status == metrics.StatusDegraded {
			sum.Status, sum.StopReason = metrics.StatusDegraded, s.StopReason
		}
	}
	sum.InitialConnectMS = connectMS
	sum.TargetRate = acc.TargetRate()
	for _, g := range first.Summary.Groups {
		gs := acc.Group(g.Name)
		gs.Workload, gs.QueryMode, gs.Clients = g.Workload, g.QueryMode, 0
		for _, r := range runs {
			for _, rg := range r.Summary.Groups {
				if rg.Name == g.Name {
					gs.Clients += rg.Clients
				}
			}
		}
		sum.Groups = append(sum.Groups, gs)
	}
	figs, note := figures(runs)
	sum.Figures = figs
	return sum, note
}

func accumulate(ivs []metrics.Interval) *metrics.Accumulator {
	acc := &metrics.Accumulator{}
	for _, iv := range ivs {
		acc.Add(iv)
	}
	return acc
}

// clientCounted reports whether a figure was counted by a segment's own
// clients (a share of the run: summed) rather than read from the database
// (the whole run already: taken once).
func clientCounted(f metrics.Figure) bool {
	return f.Tx != "" || strings.HasPrefix(f.Note, "counted by pgarena's clients")
}

// figures merges figures of merit. Database figures (TPC-C NOPM from
// d_next_o_id, TPM from pg_stat_database) see every segment's work, since
// all segments run against one database at the same time: they are taken
// once, from the first segment that has them, not summed N times. Figures
// the clients counted are summed.
func figures(runs []*store.Run) ([]metrics.Figure, string) {
	var out []metrics.Figure
	from := ""
	for _, r := range runs {
		if len(r.Summary.Figures) > 0 {
			from = r.ID
			for _, f := range r.Summary.Figures {
				if !clientCounted(f) {
					f.Note = strings.TrimSpace(f.Note + " (from the database, once: segment " + cmpOr(r.Spec.Segment, "0") + ")")
				}
				out = append(out, f)
			}
			break
		}
	}
	if from == "" {
		return nil, ""
	}
	for i := range out {
		if !clientCounted(out[i]) {
			continue
		}
		out[i].Value = 0
		for _, r := range runs {
			for _, f := range r.Summary.Figures {
				if f.Name == out[i].Name && f.Tx == out[i].Tx {
					out[i].Value += f.Value
				}
			}
		}
	}
	crossCheck(out)
	return out, fmt.Sprintf("database figures (NOPM, TPM) from run %s's snapshots, taken once; client-counted figures summed", from)
}

// FigureAgreement is how far apart (a share of the clients' figure) a
// database figure and the client-counted figure it is cross-checked with
// may be before the merged run notes it; a segment does not compare them
// (its database figure counts every segment's work).
const FigureAgreement = 0.01

// crossCheck notes, on each database figure with a CrossCheck, whether the
// merged figures disagree.
func crossCheck(figs []metrics.Figure) {
	for i, f := range figs {
		if f.CrossCheck == "" {
			continue
		}
		for _, c := range figs {
			if c.Name == f.CrossCheck && c.Tx == "" && c.Value > 0 && math.Abs(f.Value-c.Value)/c.Value > FigureAgreement {
				figs[i].Note += fmt.Sprintf("; database %.0f vs clients %.0f (%s): they differ by more than %g%% (other writers, or a segment missing)",
					f.Value, c.Value, c.Name, 100*FigureAgreement)
			}
		}
	}
}

// write records the merged run: spec (marked merged, sources listed),
// server info and samples of the first segment (the server is sampled
// once), the intervals, then histograms and summary.
func write(st *store.Store, runs []*store.Run, ivs []metrics.Interval, sum metrics.Summary, notes []string, opt Options) (*Result, error) {
	first := runs[0]
	spec := first.Spec
	spec.ID, spec.Created = "", time.Now()
	spec.Label, spec.CommandLine, spec.PgarenaVersion = opt.Label, opt.CommandLine, opt.Version
	spec.Segment, spec.WholeClients, spec.StartAt = "", 0, first.Spec.StartAt
	spec.Clients, spec.Threads = sum.Clients, sum.Threads
	spec.PlanTag = store.PlanTag{}
	spec.MergedFrom, spec.MergeNotes = nil, notes
	for _, r := range runs {
		spec.MergedFrom = append(spec.MergedFrom, r.ID)
	}
	w, err := st.Create(spec)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if first.Server != nil {
		if err := w.SetServer(*first.Server); err != nil {
			return nil, err
		}
	}
	if len(first.Samples) > 0 {
		if err := w.AppendSamples(first.Samples...); err != nil {
			return nil, err
		}
	}
	if len(ivs) > 0 {
		if err := w.AppendIntervals(ivs...); err != nil {
			return nil, err
		}
	}
	sum.RunID = w.ID()
	if err := w.Finish(sum, accumulate(ivs)); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return &Result{ID: w.ID(), Dir: w.Dir(), Summary: sum, Notes: notes}, nil
}
