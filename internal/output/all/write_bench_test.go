package all

import (
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/output"
	promout "github.com/pgarena/pgarena/internal/output/prometheus"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/store"
)

func init() { Register() }

// BenchmarkWrite is one second of a tpcb select-only run as an output sees
// it: an interval of one type (an HDR histogram of 15,000 latencies) and
// the samples of one sampling (5 sources, 60 series). For prometheus, one
// scrape of /metrics is added.
func BenchmarkWrite(b *testing.B) {
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for i := range 15000 {
		_ = h.RecordValue(int64(60 + i%400))
	}
	tx := metrics.TxStats{Name: "select-only", Count: 15000, Latency: h, Service: h}
	iv := &metrics.Interval{Seq: 1, Start: time.Now(), End: time.Now().Add(time.Second), Connected: 2, Tx: []metrics.TxStats{tx}}
	var smp []store.Sample
	for s := range 5 {
		vals := map[string]float64{}
		for k := range 12 {
			vals["pg.series"+string(rune('a'+s))+string(rune('a'+k))] = float64(k)
		}
		smp = append(smp, store.Sample{Time: time.Now(), Source: "src", Values: vals})
	}
	for _, spec := range []string{"jsonl=" + filepath.Join(b.TempDir(), "x.jsonl"), "csv=" + filepath.Join(b.TempDir(), "x.csv"), "prometheus=127.0.0.1:0"} {
		b.Run(spec[:3], func(b *testing.B) {
			o, err := output.New(spec, output.Params{})
			if err != nil {
				b.Fatal(err)
			}
			defer o.(io.Closer).Close()
			_ = o.Write(session.Record{Start: &session.RunStart{ID: "x"}})
			p, _ := o.(*promout.Output)
			for b.Loop() {
				if err := o.Write(session.Record{Interval: iv}); err != nil {
					b.Fatal(err)
				}
				if err := o.Write(session.Record{Samples: smp}); err != nil {
					b.Fatal(err)
				}
				if p != nil {
					resp, err := http.Get("http://" + p.Addr() + "/metrics")
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
}
