package randgen

import (
	"math"
	"math/rand/v2"
	"testing"
)

func newRNG() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

const draws = 200000

func TestUniformRangeAndMean(t *testing.T) {
	rng := newRNG()
	seen := map[int64]bool{}
	var sum float64
	for range draws {
		v := Uniform(rng, -5, 5)
		if v < -5 || v > 5 {
			t.Fatalf("Uniform(-5, 5) = %d", v)
		}
		seen[v] = true
		sum += float64(v)
	}
	if len(seen) != 11 {
		t.Errorf("Uniform(-5, 5) hit %d distinct values, want 11", len(seen))
	}
	if mean := sum / draws; math.Abs(mean) > 0.05 {
		t.Errorf("mean of Uniform(-5, 5) = %.3f, want about 0", mean)
	}
	if v := Uniform(rng, 7, 7); v != 7 {
		t.Errorf("Uniform(7, 7) = %d", v)
	}
	// the full int64 range must not overflow
	for range 1000 {
		Uniform(rng, math.MinInt64, math.MaxInt64)
	}
}

func TestUniformPanicsOnEmptyRange(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Uniform(2, 1) did not panic")
		}
	}()
	Uniform(newRNG(), 2, 1)
}

func TestExponential(t *testing.T) {
	rng := newRNG()
	const lo, hi, param = 1, 1000, 5.0
	var sum float64
	for range draws {
		v := Exponential(rng, lo, hi, param)
		if v < lo || v > hi {
			t.Fatalf("Exponential = %d outside [%d, %d]", v, lo, hi)
		}
		sum += float64(v - lo)
	}
	// r has density param*exp(-param*r)/(1-exp(-param)) on [0, 1):
	// E[r] = 1/param - exp(-param)/(1-exp(-param)); the integer value is
	// floor(n*r), whose mean is about n*E[r] - 1/2.
	er := 1/param - math.Exp(-param)/(1-math.Exp(-param))
	want := float64(hi-lo+1)*er - 0.5
	if mean := sum / draws; math.Abs(mean-want) > 0.01*want {
		t.Errorf("mean offset of Exponential = %.2f, want %.2f", mean, want)
	}
}

func TestGaussian(t *testing.T) {
	rng := newRNG()
	const lo, hi, param = 1, 10000, 2.5
	var sum, sumsq float64
	for range draws {
		v := Gaussian(rng, lo, hi, param)
		if v < lo || v > hi {
			t.Fatalf("Gaussian = %d outside [%d, %d]", v, lo, hi)
		}
		sum += float64(v)
		sumsq += float64(v) * float64(v)
	}
	mean := sum / draws
	if mid := float64(lo+hi) / 2; math.Abs(mean-mid) > 20 {
		t.Errorf("mean of Gaussian = %.1f, want about %.1f", mean, mid)
	}
	// one standard deviation spans (hi-lo+1)/(2*param) values; truncation
	// at ±param shrinks it a little (by about 6% at 2.5).
	sd := math.Sqrt(sumsq/draws - mean*mean)
	want := float64(hi-lo+1) / (2 * param)
	if sd > want || sd < 0.9*want {
		t.Errorf("stddev of Gaussian = %.1f, want a little under %.1f", sd, want)
	}
}

func TestZipfian(t *testing.T) {
	rng := newRNG()
	const lo, hi, s = 10, 1009, 1.5
	counts := map[int64]int{}
	for range draws {
		v := Zipfian(rng, lo, hi, s)
		if v < lo || v > hi {
			t.Fatalf("Zipfian = %d outside [%d, %d]", v, lo, hi)
		}
		counts[v]++
	}
	// frequency of rank k is proportional to 1/k^s: f(1)/f(2) = 2^s
	ratio := float64(counts[lo]) / float64(counts[lo+1])
	if want := math.Pow(2, s); math.Abs(ratio-want) > 0.05*want {
		t.Errorf("f(1)/f(2) = %.3f, want %.3f", ratio, want)
	}
	if v := Zipfian(rng, 3, 3, 2); v != 3 {
		t.Errorf("Zipfian(3, 3) = %d", v)
	}
}

func TestNURand(t *testing.T) {
	rng := newRNG()
	for range draws {
		if v := NURand(rng, 1023, 1, 3000, 259); v < 1 || v > 3000 {
			t.Fatalf("NURand(1023, 1, 3000) = %d", v)
		}
	}
}

func BenchmarkUniform(b *testing.B) {
	rng := newRNG()
	for b.Loop() {
		Uniform(rng, 1, 100000)
	}
}
