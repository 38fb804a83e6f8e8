package report

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/report/htmlw"
	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/store"
)

// longRun is a run of n one-second intervals with 5 transaction types.
// Intervals share a few histograms (they are only read), which keeps the
// fixture small; the report does the same work as for distinct ones.
func longRun(n int) *store.Run {
	names := []string{"new_order", "payment", "order_status", "delivery", "stock_level"}
	hists := make([]*metrics.TxStats, 10)
	for i := range hists {
		h := metrics.NewHistogram()
		for v := int64(1); v <= 200; v++ {
			_ = h.RecordValue(v * int64(100+i*37))
		}
		hists[i] = &metrics.TxStats{Latency: h, Service: h}
	}
	r := &store.Run{ID: "day", Status: metrics.StatusComplete, Spec: store.RunSpec{Workload: "tpcc", TickS: 1, Label: "day"}}
	r.Intervals = make([]metrics.Interval, n)
	for s := range n {
		iv := metrics.Interval{Seq: s + 1, Start: reporttest.T0.Add(time.Duration(s) * time.Second),
			End: reporttest.T0.Add(time.Duration(s+1) * time.Second), Connected: 64, Tx: make([]metrics.TxStats, len(names))}
		for k, name := range names {
			h := hists[(s+k)%len(hists)]
			iv.Tx[k] = metrics.TxStats{Name: name, Count: 200, Latency: h.Latency, Service: h.Service}
		}
		if s%3600 == 0 {
			iv.Tx[0].Errors[pgerr.ClassDeadlock] = 1
		}
		r.Intervals[s] = iv
	}
	// The summary as the run would have written it (accumulating it here
	// would merge 432,000 histograms: the store's work, not the report's).
	r.Summary = metrics.Summary{Status: metrics.StatusComplete, Workload: "tpcc", DurationS: float64(n),
		Transactions: int64(5 * 200 * n), TPS: 1000, Failed: 24, Latency: metrics.Stats(hists[0].Latency)}
	r.Summary.Errors[pgerr.ClassDeadlock] = 24
	for _, name := range names {
		r.Summary.Tx = append(r.Summary.Tx, metrics.TxSummary{Name: name, Transactions: int64(200 * n), TPS: 200,
			Latency: metrics.Stats(hists[0].Latency)})
	}
	return r
}

type countingWriter struct {
	n int64
	s strings.Builder
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if w.s.Len() < 200<<10 { // the page before the data
		w.s.Write(p)
	}
	return len(p), nil
}

// TestHTMLLongRun checks that a long run's report stays small: its series
// are consolidated to maxPoints points, so a 6-hour run (here, to keep the
// test quick under -race) and a 24-hour run (BenchmarkHTMLDayRun, which also
// measures the time, under 5 s by the issue) make files of the same size,
// far under 10 MB.
func TestHTMLLongRun(t *testing.T) {
	t.Parallel()
	r := longRun(6 * 3600)
	var w countingWriter
	t0 := time.Now()
	if err := HTML(&w, []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	t.Logf("6-hour run: %.1f MB in %v", float64(w.n)/1e6, time.Since(t0).Round(time.Millisecond))
	if w.n > 1<<20 {
		t.Errorf("report of a 6-hour run is %d bytes, want under 1 MB", w.n)
	}
	if !strings.Contains(w.s.String(), "Each point covers 15 intervals") {
		t.Error("the report does not say that points were consolidated")
	}
}

func BenchmarkHTMLDayRun(b *testing.B) {
	r := longRun(24 * 3600)
	b.ResetTimer()
	for b.Loop() {
		if err := HTML(io.Discard, []*store.Run{r}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTMLRender writes the page of every fixture run, hostile values
// in its strings: the writing alone, the page already built.
func BenchmarkHTMLRender(b *testing.B) {
	runs := fixtureRuns(b)
	makeHostile(runs)
	p := buildPage(runs)
	for b.Loop() {
		var w htmlw.Writer
		if err := p.render(&w); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanHTMLRender writes a plan's page, the page already built.
func BenchmarkPlanHTMLRender(b *testing.B) {
	p := newPlanPage(planFixture(true))
	for b.Loop() {
		var w htmlw.Writer
		p.render(&w)
	}
}
