// Package merge makes one run out of several: the runs of a benchmark's
// segments (--segment i/N on several machines, pods or local agents) become
// one run in the store, marked merged and listing its sources. Intervals are
// aligned on the shared tick boundaries and added up: counts, errors and
// retries summed, HDR histograms merged exactly (at their recorded
// precision), so the merged percentiles are those of every transaction of
// every segment. The summary is computed from the merged intervals as the
// store computes an interrupted run's, so show, report and compare work on
// it like on any run.
package merge

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// Options describe the merged run.
type Options struct {
	Label       string
	CommandLine []string // recorded in the merged run's spec
	Version     string
	// Expect, when above 0, is how many segments the run had: runs the
	// caller could not name (an agent that never recorded one) count as
	// missing. Without it the count comes from the runs' specs.
	Expect int
}

// Result is the merged run.
type Result struct {
	ID      string
	Dir     string
	Summary metrics.Summary
	Notes   []string // what makes it partial, and where figures came from
}

// ErrIncompatible marks runs that are not segments of one run: a run that
// was not a segment, a merged run, segments of different runs (--segment-of)
// or with different parameters (workload, clients, seed, load model,
// duration, --start-at), the same segment twice. Bad input.
var ErrIncompatible = errors.New("runs cannot be merged")

// Runs merges the runs refs name into a new run of st.
func Runs(st *store.Store, refs []string, opt Options) (*Result, error) {
	if len(refs) == 0 {
		return nil, fmt.Errorf("%w: name at least one run", ErrIncompatible)
	}
	var runs []*store.Run
	for _, ref := range refs {
		r, err := st.Load(ref)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	notes, err := order(runs, opt.Expect)
	if err != nil {
		return nil, err
	}
	ivs := Intervals(runs)
	sum, figNote := summarize(runs, ivs, opt.Label)
	if len(notes) > 0 {
		sum.Status = metrics.StatusPartial
		sum.StopReason = strings.Join(notes, "; ")
	}
	if figNote != "" {
		notes = append(notes, figNote)
	}
	return write(st, runs, ivs, sum, notes, opt)
}

// segmentOf parses a run's "i/N" (0/1 for a run that was not a segment).
func segmentOf(r *store.Run) (i, n int) {
	is, ns, ok := strings.Cut(r.Spec.Segment, "/")
	if !ok {
		return 0, 1
	}
	i, _ = strconv.Atoi(is)
	n, _ = strconv.Atoi(ns)
	return i, max(n, 1)
}

// LateStart is how long after --start-at a segment may start measuring:
// one that started later missed part of the window the others measured, so
// the merged run is partial.
const LateStart = time.Second

// order sorts runs by segment, checks they are segments of one run, and
// names what makes the merge partial: segments missing, late or not
// finished.
func order(runs []*store.Run, expect int) (notes []string, err error) {
	for _, r := range runs {
		switch {
		case len(r.Spec.MergedFrom) > 0:
			return nil, fmt.Errorf("%w: %s is itself a merged run (of %s): merge the segments, once", ErrIncompatible, r.ID, strings.Join(r.Spec.MergedFrom, ", "))
		case r.Spec.Segment == "":
			return nil, fmt.Errorf("%w: %s is not a segment (it ran the whole run): merge joins the segments of one run (run --segment, --agents or pgarena k8s)", ErrIncompatible, r.ID)
		}
	}
	slices.SortStableFunc(runs, func(a, b *store.Run) int {
		ai, _ := segmentOf(a)
		bi, _ := segmentOf(b)
		return ai - bi
	})
	first := runs[0]
	_, n := segmentOf(first)
	if expect > 0 {
		n = expect
	}
	seen := map[int]string{}
	for _, r := range runs {
		i, rn := segmentOf(r)
		if what, a, b := differ(&first.Spec, &r.Spec); what != "" {
			return nil, fmt.Errorf("%w: %s and %s are not segments of one run: their %s differ (%s vs %s)", ErrIncompatible, first.ID, r.ID, what, a, b)
		}
		switch {
		case rn != n:
			return nil, fmt.Errorf("%w: %s is segment %s, not of %d segments", ErrIncompatible, r.ID, r.Spec.Segment, n)
		case seen[i] != "":
			return nil, fmt.Errorf("%w: %s and %s are both segment %s", ErrIncompatible, seen[i], r.ID, r.Spec.Segment)
		}
		seen[i] = r.ID
		switch r.Status {
		case metrics.StatusComplete, metrics.StatusDegraded:
		default:
			notes = append(notes, fmt.Sprintf("segment %s (run %s) is %s", r.Spec.Segment, r.ID, r.Status))
		}
		if late := lateBy(r); late > LateStart {
			notes = append(notes, fmt.Sprintf("segment %s (run %s) started %s after --start-at (more than %s): it missed part of the window",
				r.Spec.Segment, r.ID, late.Round(time.Millisecond), LateStart))
		}
	}
	for i := range n {
		if seen[i] == "" {
			notes = append(notes, fmt.Sprintf("segment %d/%d is missing", i, n))
		}
	}
	return notes, nil
}

// lateBy is how long after its --start-at a segment started measuring.
func lateBy(r *store.Run) time.Duration {
	start := r.Summary.Start
	if start.IsZero() && len(r.Intervals) > 0 {
		start = r.Intervals[0].Start
	}
	if r.Spec.StartAt.IsZero() || start.IsZero() {
		return 0
	}
	return start.Sub(r.Spec.StartAt)
}

// differ names what two segments' specs disagree on that segments of one
// run share (the whole run's identity, workload and parameters, clients,
// seed, load model, duration, start), with the two values; "" if nothing.
func differ(a, b *store.RunSpec) (what, va, vb string) {
	for _, c := range []struct {
		what   string
		va, vb any
	}{
		{"whole runs (--segment-of)", a.SegmentOf, b.SegmentOf},
		{"workloads", a.Workload, b.Workload},
		{"workload parameters", a.Params, b.Params},
		{"whole-run clients", a.WholeClients, b.WholeClients},
		{"seeds", a.Seed, b.Seed},
		{"load models", loadModel(a.Load), loadModel(b.Load)},
		{"durations (s)", a.DurationS, b.DurationS},
		{"transactions per client", a.Transactions, b.Transactions},
		{"--start-at times", a.StartAt.UTC(), b.StartAt.UTC()},
		{"interval lengths (s)", a.TickS, b.TickS},
		{"query modes", a.QueryMode, b.QueryMode},
		{"--max-tries", a.MaxTries, b.MaxTries},
		{"--connect settings", a.ConnectPerTx, b.ConnectPerTx},
	} {
		if sa, sb := fmt.Sprint(c.va), fmt.Sprint(c.vb); sa != sb {
			return c.what, sa, sb
		}
	}
	return "", "", ""
}

// loadModel is a spec's load model without what is each process's own (the
// paths of pgbench's logs).
func loadModel(m map[string]string) map[string]string {
	out := maps.Clone(m)
	delete(out, "pgbench_logs")
	return out
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Intervals merges the runs' intervals slot by slot. An interval goes to
// the tick boundary (from the earliest start, every TickS) nearest its end;
// a run's intervals keep their order (a short last interval, cut at the
// end of the run, takes the next slot). Each merged interval starts where
// the previous one ended, so measured time is not counted twice.
func Intervals(runs []*store.Run) []metrics.Interval {
	var t0 time.Time
	for _, r := range runs {
		if len(r.Intervals) > 0 && (t0.IsZero() || r.Intervals[0].Start.Before(t0)) {
			t0 = r.Intervals[0].Start
		}
	}
	tick := time.Duration(runs[0].Spec.TickS * float64(time.Second))
	if tick <= 0 {
		tick = time.Second
	}
	slots := map[int][]metrics.Interval{}
	last := 0
	var names []string // every transaction type, in the order first seen
	group := map[string]string{}
	for _, r := range runs {
		prev := 0
		for _, iv := range r.Intervals {
			for _, t := range iv.Tx {
				if _, ok := group[t.Name]; !ok {
					names = append(names, t.Name)
					group[t.Name] = t.Group
				}
			}
			k := max(int((iv.End.Sub(t0)+tick/2)/tick), prev+1)
			slots[k] = append(slots[k], iv)
			prev, last = k, max(last, k)
		}
	}
	var out []metrics.Interval
	start := t0
	for k := 1; k <= last; k++ {
		members := slots[k]
		if len(members) == 0 {
			continue
		}
		iv := mergeSlot(members, names, group)
		iv.Seq, iv.Start = len(out)+1, start
		if !iv.End.After(start) {
			iv.End = start.Add(time.Microsecond)
		}
		start = iv.End
		out = append(out, iv)
	}
	return out
}

// mergeSlot adds up the intervals of one slot: transaction types by name,
// every slot with the same types in the same order.
func mergeSlot(members []metrics.Interval, names []string, group map[string]string) metrics.Interval {
	var iv metrics.Interval
	byName := map[string][]metrics.TxStats{}
	// A slot is drain time only when every member's measured time is over.
	iv.Drain = len(members) > 0
	for _, m := range members {
		iv.Drain = iv.Drain && m.Drain
		if m.End.After(iv.End) {
			iv.End = m.End
		}
		iv.Warmup = iv.Warmup || m.Warmup
		iv.Connected += m.Connected
		iv.TargetRate += m.TargetRate
		iv.Step = max(iv.Step, m.Step)
		for _, t := range m.Tx {
			byName[t.Name] = append(byName[t.Name], t)
		}
	}
	for _, name := range names {
		t := metrics.MergeTx(name, byName[name])
		t.Group = group[name]
		iv.Tx = append(iv.Tx, t)
	}
	return iv
}
