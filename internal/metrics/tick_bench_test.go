package metrics

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgerr"
)

// BenchmarkTickCycle is one interval's work for one transaction type with
// 1,000 transactions: Tick, the store's encoding (MarshalJSON) and the
// session's two accumulators; reuse: with ReuseHistograms, as in a run.
func BenchmarkTickCycle(b *testing.B) {
	b.Run("new", func(b *testing.B) { tickCycle(b, false) })
	b.Run("reuse", func(b *testing.B) { tickCycle(b, true) })
}

func tickCycle(b *testing.B, reuse bool) {
	r := NewRecorder([]string{"a"}, t0)
	if reuse {
		r.ReuseHistograms()
	}
	h := r.NewHandle()
	var run, step Accumulator
	now := t0
	for b.Loop() {
		for i := 0; i < 1000; i++ {
			start := now.Add(time.Duration(i) * time.Microsecond)
			h.Record(0, start, start, start.Add(time.Duration(200+i%300)*time.Microsecond+time.Duration(i/999)*80*time.Millisecond), pgerr.ClassNone)
		}
		now = now.Add(time.Second)
		iv := r.Tick(now)
		if _, err := json.Marshal(iv); err != nil {
			b.Fatal(err)
		}
		run.Add(iv)
		step.Add(iv)
	}
}
