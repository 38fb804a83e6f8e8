// Package randgen holds the seeded random generators benchmarks draw their
// keys and values from: pgbench's random functions (uniform, exponential,
// gaussian, zipfian) and TPC-C's NURand.
//
// Every generator takes the caller's *rand.Rand (math/rand/v2) so a client's
// sequence is a pure function of its seed; none keeps state of its own, and
// none allocates. The ranges and distributions follow pgbench 15
// (src/bin/pgbench/pgbench.c: getrand, getExponentialRand, getGaussianRand,
// getZipfianRand), so a script ported from pgbench draws from the same
// distributions, though not the same sequence: pgbench uses its own PRNG.
package randgen

import (
	"math"
	"math/rand/v2"
)

// Uniform returns an integer uniformly distributed in [lo, hi], both
// inclusive, like pgbench's random(lo, hi). It panics if hi < lo.
func Uniform(rng *rand.Rand, lo, hi int64) int64 {
	if hi < lo {
		panic("randgen: Uniform with hi < lo")
	}
	span := uint64(hi) - uint64(lo) // hi-lo without signed overflow
	if span == math.MaxUint64 {
		return int64(rng.Uint64())
	}
	return lo + int64(rng.Uint64N(span+1))
}

// Exponential returns an integer in [lo, hi] drawn from a truncated
// exponential distribution, like pgbench's random_exponential(lo, hi,
// param): frequencies fall exponentially from lo, and the lowest fraction f
// of the range receives (1-exp(-param*f))/(1-exp(-param)) of the draws. It
// panics if hi < lo or param <= 0.
func Exponential(rng *rand.Rand, lo, hi int64, param float64) int64 {
	if hi < lo || !(param > 0) {
		panic("randgen: Exponential with hi < lo or param <= 0")
	}
	cut := math.Exp(-param)
	u := 1.0 - rng.Float64() // (0, 1]
	// -log(cut + (1-cut)*u)/param lies in [0, 1)
	r := -math.Log(cut+(1.0-cut)*u) / param
	return lo + scale(hi, lo, r)
}

// Gaussian returns an integer in [lo, hi] drawn from a normal distribution
// centred on the middle of the range and truncated at ±param standard
// deviations from it, like pgbench's random_gaussian(lo, hi, param). pgbench
// requires param >= 2; Gaussian panics if hi < lo or param < 2.
func Gaussian(rng *rand.Rand, lo, hi int64, param float64) int64 {
	if hi < lo || !(param >= 2) {
		panic("randgen: Gaussian with hi < lo or param < 2")
	}
	var stdev float64
	for {
		// Box-Muller on (0, 1] uniforms, retried until inside ±param, as
		// pgbench's getGaussianRand.
		r1 := 1.0 - rng.Float64()
		r2 := 1.0 - rng.Float64()
		stdev = math.Sqrt(-2.0*math.Log(r1)) * math.Sin(2.0*math.Pi*r2)
		if stdev >= -param && stdev < param {
			break
		}
	}
	r := (stdev + param) / (param * 2.0) // [0, 1)
	return lo + scale(hi, lo, r)
}

// Zipfian returns an integer in [lo, hi] drawn from a zipfian distribution
// of exponent s, like pgbench's random_zipfian(lo, hi, s): value lo+k-1 has
// a frequency proportional to 1/k^s. pgbench accepts s in [1.001, 1000]; so
// does Zipfian, and it panics otherwise or if hi < lo.
//
// It uses the rejection method of Devroye ("Non-Uniform Random Variate
// Generation", p. 550), as pgbench's computeIterativeZipfian.
func Zipfian(rng *rand.Rand, lo, hi int64, s float64) int64 {
	if hi < lo || !(s >= 1.001 && s <= 1000) {
		panic("randgen: Zipfian with hi < lo or s outside [1.001, 1000]")
	}
	n := float64(uint64(hi)-uint64(lo)) + 1
	if n <= 1 {
		return lo
	}
	b := math.Pow(2.0, s-1.0)
	for {
		u := rng.Float64()
		v := rng.Float64()
		x := math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		// reject if too large or out of bound (u == 0 gives x = +Inf)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= n {
			return lo + int64(x) - 1
		}
	}
}

// NURand is TPC-C's non-uniform random function (TPC-C 5.11, clause
// 2.1.6): (((random(0, a) | random(x, y)) + c) % (y - x + 1)) + x, where c
// is a run-time constant chosen once per field (clause 2.1.6.1).
func NURand(rng *rand.Rand, a, x, y, c int64) int64 {
	return ((Uniform(rng, 0, a)|Uniform(rng, x, y))+c)%(y-x+1) + x
}

// scale maps r in [0, 1) onto [0, hi-lo] as pgbench does:
// (int64)((max - min + 1) * r).
func scale(hi, lo int64, r float64) int64 {
	v := int64((float64(uint64(hi)-uint64(lo)) + 1) * r)
	if span := int64(uint64(hi) - uint64(lo)); v > span || v < 0 {
		// float rounding at huge spans; stay in range
		return span
	}
	return v
}
