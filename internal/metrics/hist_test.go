package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgarena/pgarena/internal/pgerr"
)

// testHistograms are histograms of several shapes: empty, one value, unit
// resolution only, values spread over every bucket, huge counts.
func testHistograms() []*hdr.Histogram {
	rng := rand.New(rand.NewPCG(1, 2))
	var hs []*hdr.Histogram
	hs = append(hs, NewHistogram())
	one := NewHistogram()
	recordMicros(one, 37)
	hs = append(hs, one)
	for _, spread := range []int64{100, 2048, 5000, 1e6, histHighest} {
		h := NewHistogram()
		for i := 0; i < 2000; i++ {
			recordMicros(h, 1+rng.Int64N(spread))
		}
		hs = append(hs, h)
	}
	big := NewHistogram()
	_ = big.RecordValues(1, 1<<40)
	_ = big.RecordValues(histHighest, 1<<50)
	_ = big.RecordValues(3000, 300)
	return append(hs, big)
}

// v2Payload is the uncompressed payload of a V2 compressed encoding.
func v2Payload(t *testing.T, enc string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(b) < 8 {
		t.Fatalf("not a V2 compressed encoding (%v)", err)
	}
	r, err := zlib.NewReader(bytes.NewReader(b[8:]))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestHistogramWorkMatchesHdr(t *testing.T) {
	for i, h := range testHistograms() {
		mean, sd, maxV := histStats(h, nil)
		if h.TotalCount() > 0 && (mean != h.Mean() || sd != h.StdDev() || maxV != h.Max()) {
			t.Errorf("histogram %d: mean/stddev/max %v %v %v, hdr says %v %v %v", i, mean, sd, maxV, h.Mean(), h.StdDev(), h.Max())
		}
		ps := []float64{0.001, 1, 25, 50, 50, 90, 95, 99, 99.9, 99.99, 100}
		if h.TotalCount() > 0 && !slices.Equal(histPercentiles(h, nil, ps), h.ValueAtPercentilesSlice(ps)) {
			t.Errorf("histogram %d: percentiles %v, hdr says %v", i, histPercentiles(h, nil, ps), h.ValueAtPercentilesSlice(ps))
		}
		got, ok := encodeV2(h, nil)
		want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if !ok || err != nil || !bytes.Equal(v2Payload(t, got), v2Payload(t, string(want))) {
			t.Errorf("histogram %d: encoded payload differs from hdr's (ok %v, err %v)", i, ok, err)
		}
		back, err := DecodeHistogram(got)
		if err != nil || !back.Equals(h) {
			t.Errorf("histogram %d: decoded encoding differs (err %v)", i, err)
		}
		a, b := NewHistogram(), NewHistogram()
		recordMicros(a, 5)
		recordMicros(b, 5)
		mergeHist(a, h, nil)
		b.Merge(h)
		if !a.Equals(b) {
			t.Errorf("histogram %d: merge differs from hdr's", i)
		}
	}
}

// The buckets Tick lists, and those merges compute, are the histograms'.
func TestTickKnowsItsBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	r := NewRecorder([]string{"a", "b"}, t0)
	hs := []*Handle{r.NewHandle(), r.NewHandle()}
	var acc Accumulator
	now := t0
	for tick := 0; tick < 3; tick++ {
		for i := 0; i < 500; i++ {
			d := time.Duration(rng.Int64N(int64(10*time.Second)) >> rng.IntN(30))
			start := now.Add(time.Duration(i) * time.Microsecond)
			hs[i%2].Record(rng.IntN(2), start, start.Add(d/3), start.Add(d), pgerr.ClassNone)
		}
		now = now.Add(time.Second)
		iv := r.Tick(now)
		acc.Add(iv)
		total := iv.Total()
		for _, tx := range append(iv.Tx, total, acc.Tx[0], acc.Tx[1]) {
			for _, c := range []struct {
				h     *hdr.Histogram
				known []bucketCount
			}{{tx.Latency, tx.latBuckets}, {tx.Service, tx.svcBuckets}} {
				want, _ := nonEmpty(c.h)
				if c.known == nil || len(want) != len(c.known) {
					t.Fatalf("tick %d %s: %d buckets known, histogram has %d", tick, tx.Name, len(c.known), len(want))
				}
				for i := range want {
					if want[i] != c.known[i] {
						t.Fatalf("tick %d %s: bucket %d is %v, histogram says %v", tick, tx.Name, i, c.known[i], want[i])
					}
				}
			}
			if tx.LatencyStats() != Stats(tx.Latency) {
				t.Fatalf("%s: stats from buckets differ", tx.Name)
			}
			if got, want := tx.LatencyMax(), tx.Latency.Max(); got != want {
				t.Fatalf("%s: LatencyMax %d, hdr's Max %d", tx.Name, got, want)
			}
			got, err := tx.EncodeLatency()
			want, err2 := EncodeHistogram(tx.Latency)
			if err != nil || err2 != nil || got != want {
				t.Fatalf("%s: EncodeLatency differs from EncodeHistogram (%v, %v)", tx.Name, err, err2)
			}
		}
	}
}

func TestHistogramWorkOtherLayoutFallsBack(t *testing.T) {
	h := hdr.New(1, 1000, 2)
	_ = h.RecordValue(10)
	if _, ok := encodeV2(h, nil); ok {
		t.Fatal("a histogram of another layout was encoded as pgarena's")
	}
	to := hdr.New(1, 1000, 2)
	mergeHist(to, h, nil)
	if to.TotalCount() != 1 || to.Max() != h.Max() {
		t.Fatal("merge of another layout lost values")
	}
}

// BenchmarkIntervalEncode is the per-tick work of one transaction type
// with a few hundred distinct latencies: statistics and both encodings.
func BenchmarkIntervalEncode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHistogram()
	for i := 0; i < 20000; i++ {
		recordMicros(h, 20+rng.Int64N(300)+rng.Int64N(2)*rng.Int64N(200000))
	}
	for b.Loop() {
		_ = Stats(h)
		_, _ = EncodeHistogram(h)
		_, _ = EncodeHistogram(h)
	}
}

func BenchmarkIntervalEncodeHdr(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHistogram()
	for i := 0; i < 20000; i++ {
		recordMicros(h, 20+rng.Int64N(300)+rng.Int64N(2)*rng.Int64N(200000))
	}
	for b.Loop() {
		_ = h.ValueAtPercentilesSlice(statPercentiles)
		_, _, _ = h.Mean(), h.StdDev(), h.Max()
		_, _ = h.Encode(hdr.V2CompressedEncodingCookieBase)
		_, _ = h.Encode(hdr.V2CompressedEncodingCookieBase)
	}
}

// Tick fills the histograms from its bucket sets: they hold what
// recording each value with hdr gives.
func TestTickHistogramsAreHdrs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := NewRecorder([]string{"a"}, t0)
	h := r.NewHandle()
	wantLat, wantSvc := NewHistogram(), NewHistogram()
	for i := 0; i < 2000; i++ {
		d := time.Duration(rng.Int64N(int64(2*time.Hour))) >> rng.IntN(40)
		start := t0.Add(time.Duration(i) * time.Microsecond)
		h.Record(0, start, start.Add(d/4), start.Add(d), pgerr.ClassNone)
		recordMicros(wantLat, int64(d/time.Microsecond))
		recordMicros(wantSvc, int64((d-d/4)/time.Microsecond))
	}
	iv := r.Tick(t0.Add(time.Second))
	if !iv.Tx[0].Latency.Equals(wantLat) || !iv.Tx[0].Service.Equals(wantSvc) {
		t.Fatal("Tick's histograms differ from hdr's of the same values")
	}
}

// TestLagFromBuckets: an open-loop interval's lag_ms, from its types'
// bucket lists, is what the merged histograms give, and so is a decoded
// interval's (buckets not known).
func TestLagFromBuckets(t *testing.T) {
	r := NewRecorder([]string{"a", "b"}, t0)
	h := r.NewHandle()
	for i := range 500 {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		intended := at.Add(-time.Duration(i%37) * time.Millisecond)
		h.Record(i%2, intended, at, at.Add(time.Duration(300+i*7)*time.Microsecond), pgerr.ClassNone)
	}
	iv := r.Tick(t0.Add(time.Second))
	iv.TargetRate = 500
	total := iv.Total()
	lat, _, _ := histStats(total.Latency, total.latBuckets)
	svc, _, _ := histStats(total.Service, total.svcBuckets)
	want := round3((lat - svc) / 1000)
	if got := iv.lagMS(); got != want || want <= 0 {
		t.Errorf("lag %v ms, merged histograms say %v", got, want)
	}
	b, err := json.Marshal(iv)
	if err != nil {
		t.Fatal(err)
	}
	var back Interval
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.lagMS(); got != want {
		t.Errorf("decoded interval: lag %v ms, want %v", got, want)
	}
}
