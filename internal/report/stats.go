package report

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Estimate is the mean of samples with a 95% confidence interval from the
// t-distribution: Mean ± Half. Half is NaN with fewer than two samples.
type Estimate struct {
	N    int
	Mean float64
	SD   float64 // sample standard deviation (n−1)
	Half float64 // half-width of the 95% confidence interval
}

// tQuantile975 is the 97.5th percentile of Student's t with df degrees of
// freedom: the multiplier of a two-sided 95% interval.
func tQuantile975(df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
}

// MeanCI estimates the mean of xs with a 95% confidence interval.
func MeanCI(xs []float64) Estimate {
	e := Estimate{N: len(xs), Half: math.NaN(), SD: math.NaN()}
	if e.N == 0 {
		e.Mean = math.NaN()
		return e
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	e.Mean = sum / float64(e.N)
	if e.N < 2 {
		return e
	}
	var ss float64
	for _, x := range xs {
		ss += (x - e.Mean) * (x - e.Mean)
	}
	e.SD = math.Sqrt(ss / float64(e.N-1))
	e.Half = tQuantile975(float64(e.N-1)) * e.SD / math.Sqrt(float64(e.N))
	return e
}

// Difference is B − A with a 95% confidence interval (Welch's t: unequal
// variances, Welch–Satterthwaite degrees of freedom).
type Difference struct {
	Diff, Half, DF float64
}

// Significant reports whether the interval excludes zero. It is false when
// the interval is unknown.
func (d Difference) Significant() bool {
	return !math.IsNaN(d.Half) && math.Abs(d.Diff) > d.Half
}

// Welch computes the difference of the means of b and a.
func Welch(a, b Estimate) Difference {
	d := Difference{Diff: b.Mean - a.Mean, Half: math.NaN(), DF: math.NaN()}
	if a.N < 2 || b.N < 2 {
		return d
	}
	va, vb := a.SD*a.SD/float64(a.N), b.SD*b.SD/float64(b.N)
	se := math.Sqrt(va + vb)
	if se == 0 {
		d.Half, d.DF = 0, float64(a.N+b.N-2)
		return d
	}
	d.DF = (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	d.Half = tQuantile975(d.DF) * se
	return d
}
