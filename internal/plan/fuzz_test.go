package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: any bytes are a plan or an *Error naming the file; a plan's
// cells expand with ids and args (when there are few enough to expand).
func FuzzParse(f *testing.F) {
	paths, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no example plans: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(twoTargets))
	f.Add([]byte("workloads: [{name: tpcb}]\nmatrix: {target: [x]}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse("f.yaml", b)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error %T %q, want a *plan.Error naming f.yaml", err, err)
			}
			return
		}
		n := 1 // cells, counted before expanding them
		factors := []int{p.Repeats, len(p.Targets), len(p.Workloads)}
		for _, a := range p.Axes {
			factors = append(factors, len(a.Values))
		}
		for _, k := range factors {
			if n *= max(k, 1); k > 1000 || n > 1000 {
				return
			}
		}
		for _, c := range p.Cells() {
			if c.ID == "" || c.Key() == "" {
				t.Fatalf("cell %+v without an id", c)
			}
			_ = c.Args(true)
			_ = c.TargetArgs()
		}
	})
}
