package metrics

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgerr"
)

// tickN records n transactions of n ms each and cuts the interval ending
// at second n.
func tickN(r *Recorder, h *Handle, n int) Interval {
	at := t0.Add(time.Duration(n-1) * time.Second)
	for range n {
		h.Record(0, at, at, at.Add(time.Duration(n)*time.Millisecond), pgerr.ClassNone)
	}
	return r.Tick(t0.Add(time.Duration(n) * time.Second))
}

// intact checks that iv holds what tickN(n) recorded.
func intact(t *testing.T, iv Interval, n int) {
	t.Helper()
	lat, svc := iv.Tx[0].Latency, iv.Tx[0].Service
	if lat.TotalCount() != int64(n) || svc.TotalCount() != int64(n) || lat.Min() != int64(n)*1000 || lat.Max() > int64(n)*1001 {
		t.Errorf("interval %d: latency count %d min %d max %d, service count %d; want %d of %d µs",
			iv.Seq, lat.TotalCount(), lat.Min(), lat.Max(), svc.TotalCount(), n, n*1000)
	}
}

// TestTickReusesOnlyReleasedHistograms: with ReuseHistograms, an
// interval's histograms go to a later interval once neither the Recorder
// (until its next Tick) nor a Retain holds them, emptied; a retained
// interval keeps its counts however many ticks pass.
func TestTickReusesOnlyReleasedHistograms(t *testing.T) {
	r := NewRecorder([]string{"a"}, t0)
	r.ReuseHistograms()
	h := r.NewHandle()
	iv1 := tickN(r, h, 1)
	iv1.Retain()
	iv2 := tickN(r, h, 2)
	if iv2.Tx[0].Latency == iv1.Tx[0].Latency || iv2.Tx[0].Service == iv1.Tx[0].Service {
		t.Fatal("a retained interval's histograms went to the next interval")
	}
	iv3 := tickN(r, h, 3)
	if iv3.Tx[0].Latency != iv2.Tx[0].Latency && iv3.Tx[0].Latency != iv2.Tx[0].Service {
		t.Error("an interval nobody held did not lend its histograms to the next")
	}
	intact(t, iv3, 3)
	for n := 4; n <= 6; n++ {
		tickN(r, h, n)
	}
	intact(t, iv1, 1)
	iv1.Release()
	intact(t, tickN(r, h, 7), 7)

	plain := NewRecorder([]string{"a"}, t0)
	ph := plain.NewHandle()
	p1 := tickN(plain, ph, 1)
	if p2 := tickN(plain, ph, 2); p2.Tx[0].Latency == p1.Tx[0].Latency {
		t.Error("a Recorder without ReuseHistograms reused a histogram")
	}
}

// TestAccumulatorReset: after Reset an Accumulator sums what it is given
// next as a new one does, in the histograms it had.
func TestAccumulatorReset(t *testing.T) {
	r := NewRecorder([]string{"a"}, t0)
	h := r.NewHandle()
	var used, fresh Accumulator
	used.Add(tickN(r, h, 1))
	hists := map[any]bool{used.Tx[0].Latency: true, used.Tx[0].Service: true}
	used.Reset()
	for n := 2; n <= 3; n++ {
		iv := tickN(r, h, n)
		used.Add(iv)
		fresh.Add(iv)
	}
	var a, b Summary
	used.Fill(&a)
	fresh.Fill(&b)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("after Reset:\n%s\nnew:\n%s", ja, jb)
	}
	if !hists[used.Tx[0].Latency] || !hists[used.Tx[0].Service] {
		t.Error("Reset did not keep the histograms")
	}
}
