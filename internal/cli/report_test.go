package cli

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/report"
)

func TestReportCommand(t *testing.T) {
	t.Parallel()
	dir, ids := fixtures(t)
	out := t.TempDir()

	// Default: the last run (the XSS probe).
	one := filepath.Join(out, "one.html")
	r := mustRun(t, "report", "--results", dir, "-o", one)
	if !strings.Contains(r.stderr, "report of 1 run(s) written to "+one) {
		t.Errorf("stderr: %s", r.stderr)
	}
	b, err := os.ReadFile(one)
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	if !strings.Contains(h, "&lt;script&gt;alert(1)&lt;/script&gt;") || strings.Contains(h, "<script>alert(1)") {
		t.Error("the label is not escaped in the report")
	}

	// Several runs by id, last~N and label glob, with PNG charts.
	cmp := filepath.Join(out, "cmp.html")
	charts := filepath.Join(out, "charts")
	mustRun(t, "report", "--results", dir, "-o", cmp, "--png", charts, ids[0], "last~1", "label~pool-b")
	b, err = os.ReadFile(cmp)
	if err != nil {
		t.Fatal(err)
	}
	h = string(b)
	for _, want := range []string{`id="comparison-table"`, ids[0], ids[7], ids[3], ids[5], "interrupted"} {
		if !strings.Contains(h, want) {
			t.Errorf("comparison report lacks %q", want)
		}
	}
	for _, name := range []string{"throughput.png", "latency.png", "tps-bars.png"} {
		f, err := os.Open(filepath.Join(charts, name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.Width != report.PNGWidth || cfg.Height != report.PNGHeight {
			t.Errorf("%s is %dx%d", name, cfg.Width, cfg.Height)
		}
	}

	// --png alone writes no HTML.
	pngOnly := t.TempDir()
	r = pgarena(t, nil, "report", "--results", dir, "--png", pngOnly, "last")
	if r.code != 0 {
		t.Fatal(r)
	}
	if _, err := os.Stat("pgarena-report.html"); err == nil {
		t.Error("--png alone wrote pgarena-report.html")
	}

	r = mustRun(t, "report", "--results", dir, "-o", "-", ids[1])
	if !strings.HasPrefix(r.stdout, "<!DOCTYPE html>") || !strings.Contains(r.stdout, ids[1]) {
		t.Errorf("-o - should write the report to stdout, got %.200q", r.stdout)
	}

	wantUsage(t, pgarena(t, nil, "report", "--results", dir, "-o", filepath.Join(out, "x.html"), "last~99"), "last~99")
	wantUsage(t, pgarena(t, nil, "report", "--results", dir, "-o", filepath.Join(out, "x.html"), "label~nothing*"), "nothing")
	if _, err := os.Stat(filepath.Join(out, "x.html")); err == nil {
		t.Error("a failed report left a file behind")
	}
}
