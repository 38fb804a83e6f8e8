package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestPNGs(t *testing.T) {
	t.Parallel()
	runs := fixtureRuns(t)
	for _, tc := range []struct {
		name  string
		runs  int
		files []string
	}{
		{"one", 1, []string{"throughput.png", "latency.png"}},
		{"several", 3, []string{"throughput.png", "latency.png", "tps-bars.png"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			charts, err := PNGs(runs[:tc.runs])
			if err != nil {
				t.Fatal(err)
			}
			if len(charts) != len(tc.files) {
				t.Fatalf("%d charts, want %v", len(charts), tc.files)
			}
			for i, c := range charts {
				if c.Name != tc.files[i] {
					t.Errorf("chart %d is %s, want %s", i, c.Name, tc.files[i])
				}
				img, err := png.Decode(bytes.NewReader(c.Data))
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				if b := img.Bounds(); b.Dx() != PNGWidth || b.Dy() != PNGHeight {
					t.Errorf("%s is %dx%d, want %dx%d", c.Name, b.Dx(), b.Dy(), PNGWidth, PNGHeight)
				}
				// Not blank: more than a handful of distinct colours.
				colours := map[[4]uint32]bool{}
				b := img.Bounds()
				for y := b.Min.Y; y < b.Max.Y; y += 3 {
					for x := b.Min.X; x < b.Max.X; x += 3 {
						r, g, bl, a := img.At(x, y).RGBA()
						colours[[4]uint32{r, g, bl, a}] = true
					}
				}
				if len(colours) < 5 {
					t.Errorf("%s looks blank: %d colours", c.Name, len(colours))
				}
				if dir := os.Getenv("PGARENA_REPORT_OUT"); dir != "" {
					_ = os.WriteFile(filepath.Join(dir, tc.name+"-"+c.Name), c.Data, 0o644)
				}
			}
		})
	}
}
