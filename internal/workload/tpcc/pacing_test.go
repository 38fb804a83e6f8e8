package tpcc

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/workload"
)

func TestPausesOffByDefault(t *testing.T) {
	w := New()
	rng := rand.New(rand.NewPCG(1, 2))
	wk := newWorker(w, 0, rng)
	for tx := range workload.TxType(len(txNames)) {
		if k, th := wk.Pauses(tx); k != 0 || th != 0 {
			t.Fatalf("%s: pauses %s %s without --keying-thinking", txNames[tx], k, th)
		}
	}
	// The worker's random stream is untouched when pacing is off.
	if got, want := rng.Uint64(), rand.New(rand.NewPCG(1, 2)).Uint64(); got != want {
		t.Fatal("Pauses drew from the worker's rng with pacing off")
	}
}

func TestPausesDistribution(t *testing.T) {
	w := New()
	if err := w.Flags().Parse([]string{"--keying-thinking"}); err != nil {
		t.Fatal(err)
	}
	wk := newWorker(w, 0, rand.New(rand.NewPCG(7, 1)))
	keying := []time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}  // clause 5.2.5.2
	means := []time.Duration{12 * time.Second, 12 * time.Second, 10 * time.Second, 5 * time.Second, 5 * time.Second} // clause 5.2.5.4
	const n = 200000
	for tx := range workload.TxType(len(txNames)) {
		var sum float64
		var longest time.Duration
		for range n {
			k, th := wk.Pauses(tx)
			if k != keying[tx] {
				t.Fatalf("%s: keying %s, want %s", txNames[tx], k, keying[tx])
			}
			if th < 0 {
				t.Fatalf("%s: negative think time %s", txNames[tx], th)
			}
			sum += float64(th)
			longest = max(longest, th)
		}
		mean := time.Duration(sum / n)
		// The standard error of the mean is μ/√n ≈ 0.2%; truncation at 10μ
		// lowers the mean by e^-10 ≈ 0.005%.
		if rel := math.Abs(float64(mean-means[tx])) / float64(means[tx]); rel > 0.02 {
			t.Errorf("%s: mean think time %s, want %s ±2%%", txNames[tx], mean, means[tx])
		}
		if longest > 10*means[tx] {
			t.Errorf("%s: think time %s above 10 × the mean %s", txNames[tx], longest, means[tx])
		}
		// An exponential sample of this size reaches well past 5μ.
		if longest < 5*means[tx] {
			t.Errorf("%s: longest think time %s over %d draws, not exponential-looking", txNames[tx], longest, n)
		}
	}
}

func TestThinkTimeTruncation(t *testing.T) {
	mean := 12 * time.Second
	if got := thinkTime(mean, 1); got != 0 {
		t.Errorf("r=1: %s, want 0", got)
	}
	if got := thinkTime(mean, math.SmallestNonzeroFloat64); got != 10*mean {
		t.Errorf("tiny r: %s, want the truncation at %s", got, 10*mean)
	}
	if got, want := thinkTime(mean, math.Exp(-1)), mean; got < want-time.Microsecond || got > want+time.Microsecond {
		t.Errorf("r=1/e: %s, want %s", got, want)
	}
}
