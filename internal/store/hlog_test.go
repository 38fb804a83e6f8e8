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
	if !bytes.HasSuffix(got, want.Bytes()) {
		t.Errorf("hlog lines differ from hdr's:\n%s\nwant:\n%s", got, want.Bytes())
	}
}
