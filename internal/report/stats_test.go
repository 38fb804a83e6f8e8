package report

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.7f, want %.7f", what, got, want)
	}
}

// The expected values are computed by hand from tables of Student's t:
// t(0.975; 2) = 4.302653, t(0.975; 4) = 2.776445, t(0.975; 9) = 2.262157.
func TestMeanCI(t *testing.T) {
	t.Parallel()
	near(t, "t(0.975;2)", tQuantile975(2), 4.302653)
	near(t, "t(0.975;4)", tQuantile975(4), 2.776445)
	near(t, "t(0.975;9)", tQuantile975(9), 2.262157)

	// {10, 12, 14}: mean 12, sd 2, half = 4.302653 * 2 / √3 = 4.968275.
	e := MeanCI([]float64{10, 12, 14})
	if e.N != 3 {
		t.Errorf("N = %d", e.N)
	}
	near(t, "mean", e.Mean, 12)
	near(t, "sd", e.SD, 2)
	near(t, "half", e.Half, 4.968275)

	// 1..10: mean 5.5, sd √(82.5/9) = 3.027650, half = 2.262157 * 3.027650 / √10 = 2.165851.
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	e = MeanCI(xs)
	near(t, "mean 1..10", e.Mean, 5.5)
	near(t, "sd 1..10", e.SD, 3.027650)
	near(t, "half 1..10", e.Half, 2.165851)

	if e := MeanCI([]float64{7}); e.Mean != 7 || !math.IsNaN(e.Half) {
		t.Errorf("one sample: %+v", e)
	}
}

func TestWelch(t *testing.T) {
	t.Parallel()
	// A = {10,12,14}, B = {20,22,24}: diff 10, se = √(4/3 + 4/3) = 1.632993,
	// df = (8/3)² / (2 · (4/3)² / 2) = 4, half = 2.776445 · 1.632993 = 4.533916.
	d := Welch(MeanCI([]float64{10, 12, 14}), MeanCI([]float64{20, 22, 24}))
	near(t, "diff", d.Diff, 10)
	near(t, "df", d.DF, 4)
	near(t, "half", d.Half, 4.533916)
	if !d.Significant() {
		t.Error("a difference of 10 ± 4.5 should be significant")
	}
	// A = {10,12,14}, B = {11,13,18}: mean 14, sd √13 = 3.605551;
	// va = 4/3, vb = 13/3, se = √(17/3) = 2.380476,
	// df = (17/3)² / ((4/3)²/2 + (13/3)²/2) = 32.111/10.278 = 3.124324;
	// t(0.975; 3.12) is about 3.1, so half is about 7.4 > 2.
	d = Welch(MeanCI([]float64{10, 12, 14}), MeanCI([]float64{11, 13, 18}))
	near(t, "diff 2", d.Diff, 2)
	near(t, "df 2", d.DF, 3.124324)
	if d.Significant() {
		t.Errorf("2 ± %.3f should be within noise", d.Half)
	}
}
