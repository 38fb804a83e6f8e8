package metrics

import (
	"bytes"
	"encoding/json"
	"math"
	"sync"
	"testing"
	"time"
	"unsafe"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pgarena/pgarena/internal/pgerr"
)

var t0 = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)

func TestRecordTickCounts(t *testing.T) {
	r := NewRecorder([]string{"a", "b"}, t0)
	h := r.NewHandle()
	for i := 0; i < 100; i++ {
		start := t0.Add(time.Duration(i) * time.Millisecond)
		h.Record(0, start, start, start.Add(time.Duration(i+1)*time.Millisecond), pgerr.ClassNone)
	}
	h.Record(1, t0, t0, t0.Add(time.Millisecond), pgerr.ClassDeadlock)
	h.Retry(1, pgerr.ClassSerialization, true)
	iv := r.Tick(t0.Add(time.Second))
	if iv.Seq != 1 || !iv.Start.Equal(t0) || iv.Duration() != time.Second {
		t.Fatalf("interval bounds: %+v", iv)
	}
	a, b := iv.Tx[0], iv.Tx[1]
	if a.Count != 100 || a.Failed() != 0 || a.Latency.TotalCount() != 100 {
		t.Fatalf("a: count %d failed %d hist %d", a.Count, a.Failed(), a.Latency.TotalCount())
	}
	if b.Count != 0 || b.Errors[pgerr.ClassDeadlock] != 1 || b.Retries != 1 || b.Latency.TotalCount() != 0 {
		t.Fatalf("b: %+v", b)
	}
	// Latencies 1..100 ms: p50 ≈ 50 ms, max ≈ 100 ms (3 significant digits).
	s := Stats(a.Latency)
	if math.Abs(s.P50-50) > 0.1 || math.Abs(s.Max-100) > 0.1 || math.Abs(s.Avg-50.5) > 0.1 {
		t.Fatalf("stats %+v", s)
	}
	// The next interval starts empty.
	iv2 := r.Tick(t0.Add(2 * time.Second))
	if iv2.Seq != 2 || iv2.Tx[0].Count != 0 || !iv2.Start.Equal(t0.Add(time.Second)) {
		t.Fatalf("second interval not empty: %+v", iv2.Tx[0])
	}
}

func TestLatencyIncludesQueueing(t *testing.T) {
	r := NewRecorder([]string{"x"}, t0)
	h := r.NewHandle()
	intended := t0
	start := t0.Add(90 * time.Millisecond) // waited 90 ms for a client
	h.Record(0, intended, start, start.Add(10*time.Millisecond), pgerr.ClassNone)
	iv := r.Tick(t0.Add(time.Second))
	if lat, svc := Stats(iv.Tx[0].Latency).Max, Stats(iv.Tx[0].Service).Max; math.Abs(lat-100) > 0.1 || math.Abs(svc-10) > 0.02 {
		t.Fatalf("latency %v ms (want 100), service %v ms (want 10)", lat, svc)
	}
}

// TestSamplesClampToRange: a latency past an hour (the histograms' bound)
// counts as an hour, and a sample stays 8 bytes (two µs values of 32 bits:
// a client's samples of an interval are most of its recording memory).
func TestSamplesClampToRange(t *testing.T) {
	if n := unsafe.Sizeof(sample{}); n != 8 {
		t.Fatalf("a sample is %d bytes, want 8", n)
	}
	r := NewRecorder([]string{"x"}, t0)
	h := r.NewHandle()
	h.Done(0, 3*time.Hour, 2*time.Hour)
	h.Done(0, 0, -time.Second)
	iv := r.Tick(t0.Add(time.Second))
	lat, svc := Stats(iv.Tx[0].Latency), Stats(iv.Tx[0].Service)
	hour := float64(time.Hour / time.Millisecond)
	if iv.Tx[0].Count != 2 || math.Abs(lat.Max-hour)/hour > 0.001 || math.Abs(svc.Max-hour)/hour > 0.001 {
		t.Fatalf("count %d, max latency %v ms, max service %v ms: want 2 and an hour (%v ms) each", iv.Tx[0].Count, lat.Max, svc.Max, hour)
	}
	if m := iv.Tx[0].Service.Min(); m != 1 {
		t.Fatalf("min service %d µs, want 1", m)
	}
}

// TestConcurrentRecordAndTick runs writers against a ticking reader (run
// with -race): no sample may be lost or counted twice.
func TestConcurrentRecordAndTick(t *testing.T) {
	const clients, perClient = 8, 20000
	r := NewRecorder([]string{"x"}, t0)
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		h := r.NewHandle()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perClient; i++ {
				h.Record(0, t0, t0, t0.Add(time.Millisecond), pgerr.ClassNone)
				if i%100 == 0 {
					h.Record(0, t0, t0, t0, pgerr.ClassSerialization)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var total, failed, hist int64
	now := t0
	for stop := false; !stop; {
		select {
		case <-done:
			stop = true
		default:
		}
		now = now.Add(time.Millisecond)
		iv := r.Tick(now)
		total += iv.Tx[0].Count
		failed += iv.Tx[0].Failed()
		hist += iv.Tx[0].Latency.TotalCount()
	}
	iv := r.Tick(now.Add(time.Millisecond))
	total += iv.Tx[0].Count
	failed += iv.Tx[0].Failed()
	hist += iv.Tx[0].Latency.TotalCount()
	if total != clients*perClient || hist != total || failed != clients*perClient/100 {
		t.Fatalf("total %d hist %d failed %d, want %d and %d", total, hist, failed, clients*perClient, clients*perClient/100)
	}
}

func TestIntervalJSONRoundTrip(t *testing.T) {
	r := NewRecorder([]string{"tpcb-like"}, t0)
	h := r.NewHandle()
	for i := 1; i <= 50; i++ {
		h.Record(0, t0, t0, t0.Add(time.Duration(i)*100*time.Microsecond), pgerr.ClassNone)
	}
	h.Record(0, t0, t0, t0, pgerr.ClassConnectionLost)
	iv := r.Tick(t0.Add(time.Second))
	iv.Connected = 7
	b, err := json.Marshal(iv)
	if err != nil {
		t.Fatal(err)
	}
	var back Interval
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Seq != 1 || back.Connected != 7 || !back.End.Equal(iv.End) || back.Tx[0].Count != 50 ||
		back.Tx[0].Errors[pgerr.ClassConnectionLost] != 1 || !back.Tx[0].Latency.Equals(iv.Tx[0].Latency) ||
		!back.Tx[0].Service.Equals(iv.Tx[0].Service) {
		t.Fatalf("round trip differs: %s", b)
	}
}

func TestAccumulatorSkipsWarmup(t *testing.T) {
	r := NewRecorder([]string{"x"}, t0)
	r.SetWarmupEnd(t0.Add(time.Second))
	h := r.NewHandle()
	var acc Accumulator
	for s := 1; s <= 3; s++ {
		n := 10 * s
		for i := 0; i < n; i++ {
			h.Record(0, t0, t0, t0.Add(time.Millisecond), pgerr.ClassNone)
		}
		iv := r.Tick(t0.Add(time.Duration(s) * time.Second))
		if iv.Warmup != (s == 1) {
			t.Fatalf("interval %d warmup=%v", s, iv.Warmup)
		}
		acc.Add(iv)
	}
	var sum Summary
	acc.Fill(&sum)
	if sum.Transactions != 50 || sum.DurationS != 2 || sum.TPS != 25 || sum.WarmupS != 1 {
		t.Fatalf("summary %+v", sum)
	}
	if len(sum.Tx) != 1 || sum.Tx[0].Transactions != 50 {
		t.Fatalf("per type %+v", sum.Tx)
	}
}

func TestErrorCountsJSON(t *testing.T) {
	var e ErrorCounts
	e[pgerr.ClassDeadlock] = 2
	e[pgerr.ClassAuth] = 1
	b, _ := json.Marshal(e)
	if string(b) != `{"auth":1,"deadlock":2}` {
		t.Fatalf("got %s", b)
	}
	var back ErrorCounts
	if err := json.Unmarshal([]byte(`{"auth":1,"deadlock":2,"from_the_future":3}`), &back); err != nil {
		t.Fatal(err)
	}
	if back[pgerr.ClassAuth] != 1 || back[pgerr.ClassDeadlock] != 2 || back[pgerr.ClassOther] != 3 || back.Total() != 6 {
		t.Fatalf("got %v", back)
	}
}

func BenchmarkRecord(b *testing.B) {
	r := NewRecorder([]string{"x"}, t0)
	h := r.NewHandle()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h.Record(0, t0, t0, t0.Add(time.Millisecond), pgerr.ClassNone)
		if i%100000 == 0 {
			r.Tick(t0)
		}
	}
}

// Failures, retries, skips, late and unfinished transactions reach their
// interval and only it, and a client that only commits carries no
// counts for them (txBuffer.rare).
func TestRareCountsPerInterval(t *testing.T) {
	r := NewRecorder([]string{"a"}, t0)
	h := r.NewHandle()
	h.Done(0, time.Millisecond, time.Millisecond)
	if iv := r.Tick(t0.Add(time.Second)); iv.Tx[0].Count != 1 || iv.Tx[0].Failed() != 0 {
		t.Fatalf("commits only: %+v", iv.Tx[0])
	}
	if h.cur.Load().tx[0].rare != nil || h.spare.tx[0].rare != nil {
		t.Fatal("a client that only committed holds failure counts")
	}
	d := pgerr.ErrorDetail{Time: t0, Message: "deadlock detected", SQLState: "40P01"}
	h.Fail(0, pgerr.ClassDeadlock, d)
	h.Record(0, t0, t0, t0.Add(time.Millisecond), pgerr.ClassDeadlock)
	h.Retry(0, pgerr.ClassDeadlock, true)
	h.Retry(0, pgerr.ClassDeadlock, false)
	h.Skip(0)
	h.Late(0)
	h.Unfinished(0, 3*time.Millisecond, DrainCommitted, pgerr.ClassNone, pgerr.ErrorDetail{})
	h.Unfinished(0, time.Millisecond, DrainCancelled, pgerr.ClassTimeout, pgerr.ErrorDetail{Time: t0, Message: "canceling statement due to user request", SQLState: "57014"})
	iv := r.Tick(t0.Add(2 * time.Second))
	s := iv.Tx[0]
	u := s.Unfinished
	if s.Errors[pgerr.ClassDeadlock] != 2 || s.Retries != 2 || s.Retried != 1 || s.Skipped != 1 || s.Late != 1 ||
		u.SoFarMaxUS != 3000 || u.SoFarSumUS != 4000 || u.Committed != 1 || u.Cancelled != 1 || u.Errors[pgerr.ClassTimeout] != 1 ||
		len(s.Examples) != 1 || s.Examples[0].First.Message != d.Message {
		t.Fatalf("second interval: %+v", s)
	}
	s = r.Tick(t0.Add(3 * time.Second)).Tx[0]
	if s.Failed() != 0 || s.Retries != 0 || s.Skipped != 0 || s.Late != 0 || s.Unfinished.Count() != 0 || len(s.Unfinished.Examples) != 0 || len(s.Examples) != 0 {
		t.Fatalf("third interval not empty: %+v", s)
	}
}

// TestIntervalHistogramsAsHdr: an interval's latency and service
// histograms are written as hdr encodes them, whether they are equal (a
// closed loop: encoded once) or not (time queued for a client), and for a
// type without transactions.
func TestIntervalHistogramsAsHdr(t *testing.T) {
	r := NewRecorder([]string{"closed", "open", "none"}, t0)
	h := r.NewHandle()
	for i := 1; i <= 40; i++ {
		start := t0.Add(time.Duration(i) * time.Millisecond)
		h.Record(0, start, start, start.Add(time.Duration(i)*time.Millisecond), pgerr.ClassNone)
		h.Record(1, start.Add(-time.Duration(i%7)*time.Millisecond), start, start.Add(time.Duration(i)*time.Millisecond), pgerr.ClassNone)
	}
	iv := r.Tick(t0.Add(time.Second))
	b, err := iv.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Tx []struct {
			LatencyHist string `json:"latency_hist"`
			ServiceHist string `json:"service_hist"`
		} `json:"tx"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	hdrText := func(h *hdr.Histogram) string {
		if h == nil {
			h = NewHistogram()
		}
		e, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return string(e)
	}
	// Same payload as hdr's encoding; the zlib level differs (HuffmanOnly).
	same := func(got, want string) bool { return bytes.Equal(v2Payload(t, got), v2Payload(t, want)) }
	for i, tx := range iv.Tx {
		if lat, svc := hdrText(tx.Latency), hdrText(tx.Service); !same(back.Tx[i].LatencyHist, lat) || !same(back.Tx[i].ServiceHist, svc) {
			t.Errorf("%s: latency %q service %q; hdr %q %q", tx.Name, back.Tx[i].LatencyHist, back.Tx[i].ServiceHist, lat, svc)
		}
	}
	if back.Tx[1].LatencyHist == back.Tx[1].ServiceHist {
		t.Error("open: queued time lost")
	}
}
