package report

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/store"
)

// envRequireChromium makes a missing Chromium a failure instead of a skip
// (set by make test, as in CI).
const envRequireChromium = "PGARENA_REQUIRE_CHROMIUM"

// chromium finds Debian's chromium (or $PGARENA_CHROMIUM).
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("PGARENA_CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	msg := "chromium not found (apt-get install chromium, or run scripts/install-deps.sh)"
	if os.Getenv(envRequireChromium) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// artifactDir is where screenshots are kept: testdata/out (ignored by git).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pageCheck is what the page says about itself once loaded.
type pageCheck struct {
	Expected   int      `json:"expected"`   // charts in the embedded data
	Charts     int      `json:"charts"`     // uPlot instances made
	Canvases   int      `json:"canvases"`   // chart canvases in the page
	Blank      []string `json:"blank"`      // charts whose canvas has no pixels
	NoSeries   []string `json:"noSeries"`   // charts with no pixel in a series colour
	Comparison bool     `json:"comparison"` // the comparison table is present
	Ready      bool     `json:"ready"`
	XSSText    bool     `json:"xssText"` // the probe label shows as text
}

const checkJS = `(() => {
  const data = JSON.parse(document.getElementById("pgarena-data").textContent);
  const out = {expected: data.charts.length, charts: (window.pgarenaCharts || []).length, canvases: 0,
    blank: [], noSeries: [], comparison: !!document.getElementById("comparison-table"),
    ready: !!window.pgarenaReady,
    xssText: document.body.innerText.includes("<script>alert(1)</script>")};
  const hex = s => [1, 3, 5].map(i => parseInt(s.substr(i, 2), 16));
  for (const u of (window.pgarenaCharts || [])) {
    const cv = u.root.querySelector("canvas");
    if (!cv) { out.blank.push(u.pgarenaId); continue; }
    out.canvases++;
    const px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
    // Series may hide each other (equal values): look for any of their colours.
    let drawn = 0, series = 0;
    const want = u.series.slice(1).map(s => hex(s.stroke()));
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3] > 0) drawn++;
      if (px[i + 3] > 200 && want.some(w => Math.abs(px[i] - w[0]) + Math.abs(px[i + 1] - w[1]) + Math.abs(px[i + 2] - w[2]) < 60)) series++;
    }
    if (drawn === 0) out.blank.push(u.pgarenaId);
    if (series < 10) out.noSeries.push(u.pgarenaId);
  }
  return out;
})()`

// TestHTMLInChromium opens reports of one run and of several in headless
// Chromium: no console errors or dialogs, every chart drawn, the comparison
// table present, the XSS probe shown as text; screenshots are kept in
// testdata/out.
func TestHTMLInChromium(t *testing.T) {
	exe := chromium(t)
	runs := fixtureRuns(t)
	out := artifactDir(t)

	allocCtx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	defer cancel()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	// Start the browser before subscribing to its events.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}

	var (
		mu       sync.Mutex
		problems []string
	)
	listenCtx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	const endMarker = "pgarena-test: end of pages"
	sawEnd := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for m, err := range chromedp.Console(listenCtx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleLog && m.Text == endMarker {
				close(sawEnd)
				continue
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	})
	wg.Go(func() {
		for ev, err := range chromedp.Events(listenCtx, cdppage.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			mu.Lock()
			problems = append(problems, "javascript dialog opened: "+ev.Message)
			mu.Unlock()
			_, _ = chromedp.Call(listenCtx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
		}
	})

	for _, tc := range []struct {
		name string
		runs []*store.Run
	}{
		{"one-run", []*store.Run{runs[7]}}, // interrupted, with an outage
		{"several-runs", []*store.Run{runs[0], runs[3], runs[6], runs[8]}},
		{"sweep", loadFixtures(t, reporttest.Sweep())},
	} {
		html := filepath.Join(out, "report-"+tc.name+".html")
		if err := os.WriteFile(html, []byte(renderHTML(t, tc.runs)), 0o644); err != nil {
			t.Fatal(err)
		}
		u := url.URL{Scheme: "file", Path: html}
		if err := chromedp.Do(ctx, chromedp.Navigate(u.String())); err != nil {
			t.Fatalf("%s: navigate: %v", tc.name, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[pageCheck](checkJS))
		if err != nil {
			t.Fatalf("%s: evaluate: %v", tc.name, err)
		}
		t.Logf("%s: %+v", tc.name, got)
		if !got.Ready || got.Charts != got.Expected || got.Canvases != got.Expected || got.Expected < 5 {
			t.Errorf("%s: %d charts in the data, %d drawn, %d canvases, ready %v", tc.name, got.Expected, got.Charts, got.Canvases, got.Ready)
		}
		if len(got.Blank) > 0 || len(got.NoSeries) > 0 {
			t.Errorf("%s: blank charts %v, charts without a drawn series %v", tc.name, got.Blank, got.NoSeries)
		}
		if want := len(tc.runs) > 1; got.Comparison != want {
			t.Errorf("%s: comparison table present %v, want %v", tc.name, got.Comparison, want)
		}
		if len(tc.runs) > 1 && !got.XSSText {
			t.Errorf("%s: the <script> label is not shown as text", tc.name)
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("%s: screenshot: %v", tc.name, err)
		}
		png := filepath.Join(out, "report-"+tc.name+".png")
		if err := os.WriteFile(png, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", png)
	}
	// Console messages arrive in order: once a last one is seen, every
	// message the pages logged before it has been looked at.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`console.log(`+strconv.Quote(endMarker)+`)`)); err != nil {
		t.Fatalf("log the end marker: %v", err)
	}
	select {
	case <-sawEnd:
	case <-time.After(10 * time.Second):
		t.Error("the end marker logged to the console did not arrive within 10 s")
	}
	stopListening()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page reported problems:\n%s", strings.Join(problems, "\n"))
	}
}
