package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/store"
)

// fixtures writes reporttest's standard runs (one with an XSS label, one
// interrupted) into a new results directory.
func fixtures(t *testing.T) (*store.Store, []string) {
	t.Helper()
	dir := t.TempDir()
	ids, err := reporttest.Write(dir, reporttest.Standard())
	if err != nil {
		t.Fatal(err)
	}
	return store.OpenReadOnly(dir), ids
}

// liveRun is a run being recorded, as pgarena run records it: its lock is
// held and intervals are appended one tick at a time.
type liveRun struct {
	w     *store.Writer
	rec   *metrics.Recorder
	h     *metrics.Handle
	at    time.Time
	acc   metrics.Accumulator
	seq   int
	start time.Time
}

func startLiveRun(t *testing.T, dir string, spec store.RunSpec) *liveRun {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Workload == "" {
		spec.Workload = "tpcb"
	}
	spec.Clients, spec.TickS, spec.Target = 4, 1, "postgres://bench@db1/bench"
	w, err := st.Create(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	start := time.Now().Add(-time.Hour)
	rec := metrics.NewRecorder([]string{"a"}, start)
	return &liveRun{w: w, rec: rec, h: rec.NewHandle(), at: start, start: start}
}

// tick records one second of 50 transactions.
func (l *liveRun) tick(t *testing.T) {
	t.Helper()
	for i := range 50 {
		l.h.Record(0, l.at, l.at, l.at.Add(time.Duration(1+i%5)*time.Millisecond), pgerr.ClassNone)
	}
	l.at = l.at.Add(time.Second)
	iv := l.rec.Tick(l.at)
	l.seq++
	iv.Seq, iv.Connected = l.seq, 4
	if err := l.w.AppendIntervals(iv); err != nil {
		t.Fatal(err)
	}
	l.acc.Add(iv)
}

func (l *liveRun) finish(t *testing.T) {
	t.Helper()
	sum := metrics.Summary{Status: metrics.StatusComplete, Workload: "tpcb", Clients: 4, Start: l.start, End: l.at}
	l.acc.Fill(&sum)
	if err := l.w.Finish(sum, &l.acc); err != nil {
		t.Fatal(err)
	}
	if err := l.w.Close(); err != nil {
		t.Fatal(err)
	}
}

func newTestServer(t *testing.T, st *store.Store, opts Options) *httptest.Server {
	t.Helper()
	if opts.Poll == 0 {
		opts.Poll = 50 * time.Millisecond
	}
	ts := httptest.NewServer(New(st, opts))
	t.Cleanup(ts.Close)
	return ts
}

// get returns the status and body of a GET.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s: %q missing", what, w)
		}
	}
}
