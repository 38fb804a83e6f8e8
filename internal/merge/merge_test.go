package merge

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
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
			class := metrics.ClassNone
			if rng.IntN(50) == 0 {
				class = metrics.ErrorClass(1 + rng.IntN(int(metrics.NumClasses)-1))
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
