package store

import (
	"bytes"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
)

// The hlog's interval lines are those hdr.HistogramLogWriter writes.
func TestHistogramLogLinesAreHdrs(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 123e6, time.UTC)
	r := metrics.NewRecorder([]string{"New Order", "b"}, at)
	h := r.NewHandle()
	for i := 0; i < 300; i++ {
		s := at.Add(time.Duration(i) * time.Millisecond)
		h.Record(i%2, s, s, s.Add(time.Duration(i*i+1)*time.Microsecond), pgerr.ClassNone)
	}
	var acc metrics.Accumulator
	acc.Add(r.Tick(at.Add(1500 * time.Millisecond)))
	got, err := encodeHistogramLog(&acc)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	lw := hdr.NewHistogramLogWriter(&want)
	for i := range acc.Tx {
		c := acc.Tx[i].Latency.Clone()
		c.SetTag(hlogTag(acc.Tx[i].Name, i))
		c.SetStartTimeMs(acc.First.UnixMilli())
		c.SetEndTimeMs(acc.Last.UnixMilli())
		if err := lw.OutputIntervalHistogram(c); err != nil {
			t.Fatal(err)
		}
	}
	// The same lines, but for the histograms' zlib level (metrics' encoding
	// compresses faster): each decodes to hdr's histogram.
	gotLines := bytes.Split(got, []byte("\n"))
	wantLines := bytes.Split(want.Bytes(), []byte("\n"))
	gotLines = gotLines[len(gotLines)-len(wantLines):]
	for i, w := range wantLines {
		g := gotLines[i]
		gc, wc := bytes.LastIndexByte(g, ','), bytes.LastIndexByte(w, ',')
		if gc < 0 || wc < 0 {
			if !bytes.Equal(g, w) {
				t.Errorf("hlog line %q, hdr's %q", g, w)
			}
			continue
		}
		gh, err1 := metrics.DecodeHistogram(string(g[gc+1:]))
		wh, err2 := metrics.DecodeHistogram(string(w[wc+1:]))
		if !bytes.Equal(g[:gc], w[:wc]) || err1 != nil || err2 != nil || !gh.Equals(wh) {
			t.Errorf("hlog line %q, hdr's %q (%v, %v)", g, w, err1, err2)
		}
	}
}
