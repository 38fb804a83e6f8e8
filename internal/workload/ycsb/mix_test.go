package ycsb

import (
	"math"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/loader/loadertest"
)

func newWorkload(t testing.TB, args ...string) *Workload {
	t.Helper()
	return loadertest.Configured(t, New(), args...)
}

// TestMixProportions: every core workload draws its operations in YCSB's
// proportions, and the types are the operations it runs.
func TestMixProportions(t *testing.T) {
	for _, tc := range []struct {
		letter string
		want   map[string]float64
		dist   string
	}{
		{"a", map[string]float64{"read": 0.5, "update": 0.5}, distZipfian},
		{"b", map[string]float64{"read": 0.95, "update": 0.05}, distZipfian},
		{"c", map[string]float64{"read": 1}, distZipfian},
		{"d", map[string]float64{"read": 0.95, "insert": 0.05}, distLatest},
		{"e", map[string]float64{"insert": 0.05, "scan": 0.95}, distZipfian},
		{"f", map[string]float64{"read": 0.5, "read_modify_write": 0.5}, distZipfian},
	} {
		t.Run(tc.letter, func(t *testing.T) {
			w := newWorkload(t, "--workload", tc.letter, "--records", "100")
			types := w.TxTypes()
			if len(types) != len(tc.want) {
				t.Fatalf("TxTypes %v, want the keys of %v", types, tc.want)
			}
			if w.mix.dist != tc.dist {
				t.Errorf("distribution %s, want %s", w.mix.dist, tc.dist)
			}
			c := w.NewWorker(0, newRNG())
			counts := map[string]int{}
			for range draws {
				counts[types[c.Next()]]++
			}
			for name, want := range tc.want {
				if got := float64(counts[name]) / draws; math.Abs(got-want) > 0.005 {
					t.Errorf("%s: %.4f of operations, want %.2f", name, got, want)
				}
			}
		})
	}
	if m := newWorkload(t, "--workload", "e").mix; m.maxScan != 100 || m.scanDist != distUniform {
		t.Errorf("workload e: max scan %d %s, want 100 uniform", m.maxScan, m.scanDist)
	}
}

func TestOverrides(t *testing.T) {
	w := newWorkload(t, "--workload", "a", "--read-proportion", "0.9", "--update-proportion", "0.1",
		"--request-distribution", "hotspot", "--read-all-fields=false", "--scan-proportion", "0")
	if w.mix.props[opRead] != 0.9 || w.mix.props[opUpdate] != 0.1 || w.mix.dist != distHotspot || w.mix.readAll {
		t.Errorf("overrides not applied: %+v", w.mix)
	}
	if p := w.Params(); p["read_proportion"] != "0.9" || p["workload"] != "a" || p["hotspot_data_fraction"] != "0.2" {
		t.Errorf("Params %v", p)
	}
	w = newWorkload(t, "--workload", "C", "--scan-proportion", "0.5", "--read-proportion", "0.5", "--max-scan-length", "7")
	if got := w.TxTypes(); strings.Join(got, ",") != "read,scan" || w.mix.maxScan != 7 {
		t.Errorf("TxTypes %v max scan %d", got, w.mix.maxScan)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--workload", "g"}, `--workload "g": want one of a, b, c, d, e, f`},
		{[]string{"--read-proportion", "0.9"}, "the operation proportions of workload a add up to 1.4, want 1"},
		{[]string{"--request-distribution", "pareto"}, `--request-distribution "pareto": want one of uniform, zipfian, latest, hotspot, exponential, sequential`},
		{[]string{"--exponential-percentile", "100"}, "--exponential-percentile must be above 0 and below 100"},
		{[]string{"--exponential-frac", "0"}, "--exponential-frac must be above 0"},
		{[]string{"--min-scan-length", "2000"}, "--min-scan-length must be between 1 and --max-scan-length 1000"},
		{[]string{"--field-length-distribution", "histogram"}, `--field-length-distribution "histogram": want constant, uniform or zipfian`},
		{[]string{"--min-field-length", "101"}, "--min-field-length must be between 1 and --field-length 100"},
		{[]string{"--data-integrity", "--field-length-distribution", "uniform"}, "--data-integrity needs --field-length-distribution constant"},
		{[]string{"--zero-padding", "0"}, "--zero-padding must be between 1 and 100"},
		{[]string{"--records", "100", "--insert-start", "100"}, "--insert-start must be between 0 and --records - 1 (99)"},
		{[]string{"--records", "100", "--insert-start", "50", "--insert-count", "51"}, "--insert-start 50 + --insert-count 51 pass --records 100"},
		{[]string{"--records", "100", "--insert-count", "0"}, "--insert-count must be at least 1"},
		{[]string{"--records", "0"}, "--records must be at least 1"},
		{[]string{"--insert-order", "random"}, `--insert-order "random": want hashed or ordered`},
		{[]string{"--scan-length-distribution", "latest"}, `--scan-length-distribution "latest": want uniform or zipfian`},
		{[]string{"--hotspot-opn-fraction", "1.5"}, "--hotspot-data-fraction and --hotspot-opn-fraction must be between 0 and 1"},
		{[]string{"--update-proportion", "-0.5", "--read-proportion", "1.5"}, "--read-proportion must be between 0 and 1"},
	} {
		w := New()
		if err := w.Flags().Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := w.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("%v: Validate = %v, want %q", tc.args, err, tc.err)
		}
	}
}
