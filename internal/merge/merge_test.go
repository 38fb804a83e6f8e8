package merge

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/store"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// segmentRuns records n segments of a run into st: each transaction (random
// latency, random type) goes to a random segment's recorder and to one
// recorder of the whole run. It returns the runs' ids and the whole run's
// accumulated intervals.
func segmentRuns(t *testing.T, st *store.Store, n, ticks int, seed uint64, skip map[int]bool) ([]string, *metrics.Accumulator) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	names := []string{"a", "b"}
	whole := metrics.NewRecorder(names, t0)
	wh := whole.NewHandle()
	recs := make([]*metrics.Recorder, n)
	hs := make([]*metrics.Handle, n)
	ws := make([]*store.Writer, n)
	for i := range n {
		recs[i] = metrics.NewRecorder(names, t0)
		hs[i] = recs[i].NewHandle()
		w, err := st.Create(store.RunSpec{Workload: "tpcb", Clients: 2, TickS: 1, Segment: fmt.Sprintf("%d/%d", i, n), Created: t0})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	accWhole := &metrics.Accumulator{}
	accs := make([]*metrics.Accumulator, n)
	for i := range accs {
		accs[i] = &metrics.Accumulator{}
	}
	for k := 1; k <= ticks; k++ {
		for range 200 + rng.IntN(300) {
			end := t0.Add(time.Duration(k-1)*time.Second + time.Duration(rng.Int64N(int64(time.Second))))
			lat := time.Duration(rng.ExpFloat64() * float64(3*time.Millisecond))
			tx, seg := rng.IntN(2), rng.IntN(n)
			class := pgerr.ClassNone
			if rng.IntN(50) == 0 {
				class = pgerr.ErrorClass(1 + rng.IntN(int(pgerr.NumClasses)-1))
			}
			hs[seg].Record(tx, end.Add(-lat), end.Add(-lat), end, class)
			wh.Record(tx, end.Add(-lat), end.Add(-lat), end, class)
		}
		// Segments tick a few ms apart, as on machines sharing --start-at.
		accWhole.Add(whole.Tick(t0.Add(time.Duration(k) * time.Second)))
		for i := range n {
			iv := recs[i].Tick(t0.Add(time.Duration(k)*time.Second + time.Duration(i)*3*time.Millisecond))
			accs[i].Add(iv)
			if err := ws[i].AppendIntervals(iv); err != nil {
				t.Fatal(err)
			}
		}
	}
	var ids []string
	for i, w := range ws {
		if !skip[i] {
			sum := metrics.Summary{Status: metrics.StatusComplete, Workload: "tpcb"}
			accs[i].Fill(&sum)
			if err := w.Finish(sum, accs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID())
	}
	return ids, accWhole
}

// Property: the merged run's histograms, counts and errors equal those of
// all samples recorded in one process.
func TestMergedHistogramsEqualOneProcess(t *testing.T) {
	for trial := range 6 {
		st, err := store.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		n := 1 + trial%4
		ids, whole := segmentRuns(t, st, n, 5, uint64(trial), nil)
		res, err := Runs(st, ids, Options{Label: "merged"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.Status != metrics.StatusComplete {
			t.Fatalf("status %s (%s), want complete", res.Summary.Status, res.Summary.StopReason)
		}
		run, err := st.Load(res.ID)
		if err != nil {
			t.Fatal(err)
		}
		hists, err := run.Histograms()
		if err != nil {
			t.Fatal(err)
		}
		want := whole.Histograms()
		for name, h := range want {
			if got := hists[name]; got == nil || !got.Equals(h) {
				t.Fatalf("trial %d: histogram %s of the merged run differs from one process's", trial, name)
			}
		}
		ws := metrics.Summary{}
		whole.Fill(&ws)
		if run.Summary.Transactions != ws.Transactions || run.Summary.Failed != ws.Failed || run.Summary.Errors != ws.Errors ||
			run.Summary.Latency != ws.Latency || len(run.Intervals) != 5 || run.Summary.Clients != 2*n {
			t.Fatalf("trial %d: merged %+v\nwant %+v (%d intervals)", trial, run.Summary, ws, len(run.Intervals))
		}
		if len(run.Spec.MergedFrom) != n {
			t.Fatalf("merged from %v", run.Spec.MergedFrom)
		}
	}
}

func TestMissingOrInterruptedSegmentIsPartial(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := segmentRuns(t, st, 3, 3, 9, map[int]bool{2: true}) // segment 2 never finished
	res, err := Runs(st, ids[1:], Options{})                     // segment 0 not given
	if err != nil {
		t.Fatal(err)
	}
	r := res.Summary.StopReason
	if res.Summary.Status != metrics.StatusPartial || !strings.Contains(r, "segment 0/3 is missing") || !strings.Contains(r, "segment 2/3 (run "+ids[2]+") is interrupted") {
		t.Fatalf("status %s: %s", res.Summary.Status, r)
	}
	run, err := st.Load(res.ID)
	if err != nil || run.Status != metrics.StatusPartial {
		t.Fatalf("stored status %v, %v", run, err)
	}
}

func TestSameSegmentTwiceIsRefused(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := segmentRuns(t, st, 2, 2, 3, nil)
	if _, err := Runs(st, []string{ids[0], ids[0]}, Options{}); err == nil || !strings.Contains(err.Error(), "both segment 0/2") {
		t.Fatalf("err %v", err)
	}
}

// writeRun records a run of spec whose two one-second intervals start at
// start, with figs as its figures of merit.
func writeRun(t *testing.T, st *store.Store, spec store.RunSpec, start time.Time, figs ...metrics.Figure) string {
	t.Helper()
	rec := metrics.NewRecorder([]string{"a"}, start)
	h := rec.NewHandle()
	w, err := st.Create(spec)
	if err != nil {
		t.Fatal(err)
	}
	acc := &metrics.Accumulator{}
	for k := 1; k <= 2; k++ {
		end := start.Add(time.Duration(k) * time.Second)
		h.Record(0, end.Add(-time.Millisecond), end.Add(-time.Millisecond), end.Add(-time.Microsecond), pgerr.ClassNone)
		iv := rec.Tick(end)
		acc.Add(iv)
		if err := w.AppendIntervals(iv); err != nil {
			t.Fatal(err)
		}
	}
	sum := metrics.Summary{Status: metrics.StatusComplete, Workload: spec.Workload, Start: start, End: start.Add(2 * time.Second), Figures: figs}
	acc.Fill(&sum)
	if err := w.Finish(sum, acc); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.ID()
}

// segSpec is segment seg of a tpcc run of 4 clients starting at t0.
func segSpec(seg string) store.RunSpec {
	return store.RunSpec{Workload: "tpcc", Params: map[string]string{"warehouses": "1"}, Seed: 7, Clients: 2, WholeClients: 4,
		DurationS: 2, TickS: 1, QueryMode: "prepared", MaxTries: 1, Load: map[string]string{"model": "closed"},
		Segment: seg, SegmentOf: "20261201T100000Z-abcdefgh", StartAt: t0}
}

// Only segments of one run merge: anything else is refused with the
// reason (the CLI's exit 2).
func TestMergeRefusesWhatIsNotOneRun(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	seg0, seg1 := writeRun(t, st, segSpec("0/2"), t0), writeRun(t, st, segSpec("1/2"), t0)
	plain := segSpec("")
	plain.SegmentOf, plain.StartAt = "", time.Time{}
	p1, p2 := writeRun(t, st, plain, t0), writeRun(t, st, plain, t0)
	merged, err := Runs(st, []string{seg0, seg1}, Options{})
	if err != nil || merged.Summary.Status != metrics.StatusComplete {
		t.Fatalf("segments of one run: %v %+v", err, merged)
	}
	other := func(change func(*store.RunSpec)) string {
		s := segSpec("1/2")
		change(&s)
		return writeRun(t, st, s, s.StartAt)
	}
	for _, c := range []struct {
		name string
		refs []string
		want string
	}{
		{"two plain runs", []string{p1, p2}, p1 + " is not a segment"},
		{"a plain run and segments", []string{seg0, p1, seg1}, p1 + " is not a segment"},
		{"a merged run", []string{merged.ID}, merged.ID + " is itself a merged run"},
		{"a merged run and a segment", []string{merged.ID, seg0}, "is itself a merged run"},
		{"segments of two runs", []string{seg0, other(func(s *store.RunSpec) { s.SegmentOf = "20261201T100000Z-zzzzzzzz" })},
			"whole runs (--segment-of) differ (20261201T100000Z-abcdefgh vs 20261201T100000Z-zzzzzzzz)"},
		{"another seed", []string{seg0, other(func(s *store.RunSpec) { s.Seed = 8 })}, "seeds differ (7 vs 8)"},
		{"other parameters", []string{seg0, other(func(s *store.RunSpec) { s.Params = map[string]string{"warehouses": "2"} })}, "workload parameters differ"},
		{"other clients", []string{seg0, other(func(s *store.RunSpec) { s.WholeClients = 8 })}, "whole-run clients differ (4 vs 8)"},
		{"another load model", []string{seg0, other(func(s *store.RunSpec) { s.Load = map[string]string{"model": "open", "rate": "100"} })}, "load models differ"},
		{"another duration", []string{seg0, other(func(s *store.RunSpec) { s.DurationS = 3 })}, "durations (s) differ (2 vs 3)"},
		{"another start", []string{seg0, other(func(s *store.RunSpec) { s.StartAt = t0.Add(time.Minute) })}, "--start-at times differ"},
	} {
		_, err := Runs(st, c.refs, Options{})
		if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrIncompatible saying %q", c.name, err, c.want)
		}
	}
}

// A segment that started measuring 10.8 s after --start-at missed part of
// the window: the merged run is partial and says so.
func TestLateSegmentMakesPartialMerge(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	onTime := writeRun(t, st, segSpec("0/2"), t0.Add(20*time.Millisecond))
	late := writeRun(t, st, segSpec("1/2"), t0.Add(10800*time.Millisecond))
	res, err := Runs(st, []string{onTime, late}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Status != metrics.StatusPartial || !strings.Contains(res.Summary.StopReason, "segment 1/2 (run "+late+") started 10.8s after --start-at") ||
		strings.Contains(res.Summary.StopReason, "segment 0/2") {
		t.Fatalf("status %s: %s", res.Summary.Status, res.Summary.StopReason)
	}
}

// The merged NOPM (the database's, once) agrees with the summed client
// counts: segment 0's own comparison (its clients are half the run) is not
// kept; a real disagreement is noted.
func TestMergedFiguresCrossChecked(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	figs := func(db, clients float64) []metrics.Figure {
		return []metrics.Figure{
			{Name: "nopm", Value: db, Note: "from the database: sum(d_next_o_id) delta (every segment's new orders)", CrossCheck: "nopm_clients"},
			{Name: "nopm_clients", Value: clients, Note: "counted by pgarena's clients, rollbacks excluded"},
		}
	}
	for _, c := range []struct {
		c0, c1 float64
		differ bool
	}{{500, 502, false}, {500, 600, true}} {
		s0, s1 := writeRun(t, st, segSpec("0/2"), t0, figs(1000, c.c0)...), writeRun(t, st, segSpec("1/2"), t0, figs(1000, c.c1)...)
		res, err := Runs(st, []string{s0, s1}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		nopm := res.Summary.Figures[0]
		if got := strings.Contains(nopm.Note, "differ"); nopm.Value != 1000 || got != c.differ || res.Summary.Figures[1].Value != c.c0+c.c1 {
			t.Errorf("clients %g+%g: %+v, want differ=%v", c.c0, c.c1, res.Summary.Figures, c.differ)
		}
	}
}
