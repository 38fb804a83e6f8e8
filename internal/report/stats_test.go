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

// TestTQuantile975 checks Student's t at 0.975 against the printed table
// (the two-sided 5% column of the usual table: df 1–30, 40, 60, 120, ∞, to
// half a unit of its third decimal) and against values to 17 digits
// computed with mpmath at 40 digits (integrating the density from 0 and
// solving for 0.475), whole and fractional df, on both sides of the switch
// to the large-df expansion at 10⁴.
func TestTQuantile975(t *testing.T) {
	t.Parallel()
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	rows := map[float64]float64{40: 2.021, 60: 2.000, 120: 1.980, math.Inf(1): 1.960}
	for i, want := range table {
		rows[float64(i+1)] = want
	}
	for df, want := range rows {
		if got := tQuantile975(df); !(math.Abs(got-want) <= 0.0005) {
			t.Errorf("t(0.975; %g) = %.6f, the table says %.3f", df, got, want)
		}
	}
	for _, c := range []struct{ df, want float64 }{
		{1, 12.706204736174705}, {2, 4.3026527297494637}, {3, 3.1824463052837096}, {10, 2.2281388519862747},
		{30, 2.0422724563012383}, {100, 1.9839715185235523}, {1000, 1.9623390808264085},
		{3.124324, 3.1119909432524449}, {8.5, 2.2826048933924526}, {0.5, 164.55767348048846},
		{9999, 1.9602012636213577}, {10001, 1.9602012161646411}, {1e5, 1.9599877075346096},
		{1e12, 1.959963984542427}, {math.Inf(1), 1.959963984540054},
	} {
		if got := tQuantile975(c.df); !(math.Abs(got-c.want) <= 1e-12*c.want) {
			t.Errorf("t(0.975; %g) = %.17g, want %.17g", c.df, got, c.want)
		}
	}
	for _, df := range []float64{0, -1, math.NaN()} {
		if got := tQuantile975(df); !math.IsNaN(got) {
			t.Errorf("t(0.975; %g) = %g, want NaN", df, got)
		}
	}
}

func TestMeanCI(t *testing.T) {
	t.Parallel()
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
