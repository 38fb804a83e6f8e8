package serve

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pgarena/pgarena/internal/store"
)

// chromium finds Debian's chromium (or $PGARENA_CHROMIUM); missing, the test
// skips, or fails under PGARENA_REQUIRE_CHROMIUM=1 (as in CI).
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
	if os.Getenv("PGARENA_REQUIRE_CHROMIUM") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium(t)
	allocCtx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eval runs js in the page and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor polls js in the page until it is true.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !eval[bool](t, ctx, js) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15 s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestInChromium: the list shows the test's runs with the XSS label as text;
// selecting runs and pressing compare shows the compare table; a live run's
// throughput chart gains points while intervals are written.
func TestInChromium(t *testing.T) {
	st, ids := fixtures(t)
	live := startLiveRun(t, st.Dir(), store.RunSpec{Label: "live"})
	for range 3 {
		live.tick(t)
	}
	ts := newTestServer(t, st, Options{Poll: 100 * time.Millisecond})
	ctx := browser(t)

	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	rows := eval[int](t, ctx, `document.querySelectorAll("#runs-table tbody tr").length`)
	if rows != len(ids)+1 {
		t.Errorf("list: %d rows, want %d", rows, len(ids)+1)
	}
	if !eval[bool](t, ctx, `document.body.innerText.includes("<script>alert(1)</script>")`) {
		t.Error("list: the XSS label is not shown as text")
	}

	// Compare: tick two runs, press the button.
	for _, id := range []string{ids[0], ids[3]} {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[value="`+id+`"]`))); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#runs button`)), chromedp.WaitReady(chromedp.CSS(`#comparison-table`))); err != nil {
		t.Fatalf("compare: %v", err)
	}
	if u := eval[string](t, ctx, `location.search`); !strings.Contains(u, ids[0]) || !strings.Contains(u, ids[3]) {
		t.Errorf("compare URL %q does not name the selection", u)
	}
	if !eval[bool](t, ctx, `document.getElementById("compare-text").innerText.includes("95% CI")`) {
		t.Error("compare: no noise-band table")
	}

	// Live: the throughput chart gains points as intervals are written.
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/run/"+live.w.ID())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "charts drawn", `!!window.pgarenaReady && !!window.pgarenaLive`)
	points := `window.pgarenaCharts[0].data[0].length`
	before := eval[int](t, ctx, points)
	for range 3 {
		live.tick(t)
	}
	waitFor(t, ctx, "live chart grows", points+` >= `+itoa(before+3))
	t.Logf("live chart: %d points, then %d, after %d updates", before, eval[int](t, ctx, points), eval[int](t, ctx, `window.pgarenaLive.updates`))
	if e := eval[string](t, ctx, `window.pgarenaLive.error || ""`); e != "" {
		t.Errorf("live page: %s", e)
	}
	live.finish(t)
	waitFor(t, ctx, "live page ends", `window.pgarenaLive && window.pgarenaLive.state === "ended"`)
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`#summary`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "final status shown", `document.getElementById("summary").innerText.includes("complete")`)
}

func itoa(n int) string { return strconv.Itoa(n) }
