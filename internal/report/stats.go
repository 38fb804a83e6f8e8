package report

import "math"

// Estimate is the mean of samples with a 95% confidence interval from the
// t-distribution: Mean ± Half. Half is NaN with fewer than two samples.
type Estimate struct {
	N    int
	Mean float64
	SD   float64 // sample standard deviation (n−1)
	Half float64 // half-width of the 95% confidence interval
}

// z975 is the normal distribution's 97.5th percentile, Φ⁻¹(0.975).
const z975 = 1.959963984540054

// tQuantile975 is the 97.5th percentile of Student's t with df > 0 degrees
// of freedom, whole or not (Welch's are not): the multiplier of a
// two-sided 95% interval, to 12 significant digits. It is NaN for other df.
//
// P(|T| > t) = I_w(df/2, 1/2) with w = df/(df+t²) (Abramowitz & Stegun
// §26.7; I is the regularized incomplete beta function), increasing in w:
// bisection finds the w where it is 0.05. Above 10⁴ degrees of freedom the
// expansion in 1/df around the normal quantile (A&S 26.7.5) to 1/df³ is
// closer than 10⁻¹⁵, where the beta function would lose digits.
func tQuantile975(df float64) float64 {
	switch {
	case !(df > 0):
		return math.NaN()
	case df > 1e4:
		z, z2 := z975, z975*z975
		g1 := z * (z2 + 1) / 4
		g2 := z * ((5*z2+16)*z2 + 3) / 96
		g3 := z * (((3*z2+19)*z2+17)*z2 - 15) / 384
		return z + (g1+(g2+g3/df)/df)/df
	}
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if regIncBeta(df/2, 0.5, mid) < 0.05 {
			lo = mid
		} else {
			hi = mid
		}
	}
	w := (lo + hi) / 2
	return math.Sqrt(df * (1 - w) / w)
}

// regIncBeta is the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and 0 < x < 1: its continued fraction (DLMF §8.17(v);
// Numerical Recipes 3rd ed. §6.4), which converges quickly for
// x < (a+1)/(a+b+2); above that, I_x(a, b) = 1 − I_{1−x}(b, a) (DLMF 8.17.4).
func regIncBeta(a, b, x float64) float64 {
	if x > (a+1)/(a+b+2) {
		return 1 - regIncBeta(b, a, 1-x)
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab-la-lb+a*math.Log(x)+b*math.Log1p(-x)) / a
	return front * betaFraction(a, b, x)
}

// betaFraction evaluates 1/(1+ d₁/(1+ d₂/(1+ …))) with
// d₂ₘ = m(b−m)x / ((a+2m−1)(a+2m)) and
// d₂ₘ₊₁ = −(a+m)(a+b+m)x / ((a+2m)(a+2m+1))
// by the modified Lentz method (Numerical Recipes §5.2).
func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	nonzero := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/nonzero(1-(a+b)*x/(a+1))
	h := d
	for m := 1.0; m <= 10000; m++ {
		step := func(dm float64) float64 {
			d = 1 / nonzero(1+dm*d)
			c = nonzero(1 + dm/c)
			return d * c
		}
		h *= step(m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m)))
		f := step(-(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1)))
		h *= f
		if math.Abs(f-1) < 1e-15 {
			break
		}
	}
	return h
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
