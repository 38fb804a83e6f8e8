package serve

import (
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// autostopBlock cuts the autostop section out of a run page.
func autostopBlock(body string) string {
	_, s, ok := strings.Cut(body, `<section id="autostop">`)
	if !ok {
		return ""
	}
	s, _, _ = strings.Cut(s, "</section>")
	return s
}

func TestAutostopProximity(t *testing.T) {
	dir := t.TempDir()
	l := startLiveRun(t, dir, store.RunSpec{Label: "rules", Load: map[string]string{
		"autostop": "p95>10ms for 3s; errors>25/s for 2s"}})
	plain := startLiveRun(t, dir, store.RunSpec{Label: "plain"})
	plain.tick(t)
	l.tick(t)
	ts := newTestServer(t, store.OpenReadOnly(dir), Options{})

	_, body := get(t, ts.URL+"/run/"+l.w.ID())
	block := autostopBlock(body)
	// 50 transactions of 1..5 ms: p95 is 5 ms, half the limit.
	mustContain(t, "after 1 interval", block, "p95&gt;10ms for 3s: now 5", "(50% of the limit 10 ms)",
		"over 1 s of the 3 s window", "errors&gt;25/s for 2s: now 0/s (0% of the limit 25/s)")
	if strings.Contains(block, "fired") {
		t.Errorf("a running run's rule shows as fired: %s", block)
	}
	for range 3 {
		l.tick(t)
	}
	_, body = get(t, ts.URL+"/run/"+l.w.ID())
	mustContain(t, "after 4 intervals", autostopBlock(body), "over 3 s of the 3 s window", "over 2 s of the 2 s window")

	// The run ends autostopped by its first rule.
	sum := metrics.Summary{Status: metrics.StatusAutostopped, StopReason: "p95>10ms for 3s", Workload: "tpcb", Clients: 4, Start: l.start, End: l.at}
	l.acc.Fill(&sum)
	if err := l.w.Finish(sum, &l.acc); err != nil {
		t.Fatal(err)
	}
	if err := l.w.Close(); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, ts.URL+"/run/"+l.w.ID())
	block = autostopBlock(body)
	if strings.Count(block, `class="rule fired"`) != 1 || !strings.Contains(block, `class="rule fired">p95&gt;10ms`) {
		t.Errorf("autostopped run: want the p95 rule alone marked fired: %s", block)
	}

	_, body = get(t, ts.URL+"/run/"+plain.w.ID())
	if strings.Contains(body, `id="autostop"`) {
		t.Error("a run without rules shows an autostop block")
	}
}
