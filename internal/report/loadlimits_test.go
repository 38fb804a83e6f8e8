package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/store"
)

// rampRun is an open-loop run on a rising schedule, target 100·k·(s+1)
// tx/s in second s, fast (10 ms) while the target is at most 1000·k and
// slow (800 ms) above, stopped by "p95>500ms for 3s" after n seconds.
func rampRun(id string, k float64, n int) *store.Run {
	rec := metrics.NewRecorder([]string{"a"}, t0)
	h := rec.NewHandle()
	r := &store.Run{ID: id, Status: metrics.StatusAutostopped, Spec: store.RunSpec{TickS: 1, Load: map[string]string{
		"model": "open", "schedule": "line(1,2000,60s)", "autostop": "errors>25/s for 10s; p95>500ms for 3s"}},
		Summary: metrics.Summary{StopReason: "autostop: p95>500ms for 3s"}}
	for s := range n {
		from := t0.Add(time.Duration(s) * time.Second)
		target := 100 * k * float64(s+1)
		lat := 10 * time.Millisecond
		if target > 1000*k {
			lat = 800 * time.Millisecond
		}
		for range 50 {
			h.Record(0, from, from, from.Add(lat), pgerr.ClassNone)
		}
		iv := rec.Tick(from.Add(time.Second))
		iv.TargetRate = target
		r.Intervals = append(r.Intervals, iv)
	}
	return r
}

func TestRunLoadLimits(t *testing.T) {
	l, ok := RunLoadLimits(rampRun("a", 1, 12))
	if !ok {
		t.Fatal("no load limits for an autostopped schedule run")
	}
	// The last window without p95>500ms is seconds 7-9 (targets 800, 900,
	// 1000): held 800 for the whole window; the rule fired at 1200.
	if l.Rule != "p95>500ms for 3s" || !l.Fired || l.Reached != 1200 || l.Held != 800 {
		t.Errorf("limits %+v, want rule p95>500ms for 3s, fired, reached 1200, held 800", l)
	}
	var b bytes.Buffer
	LoadLimitsText(&b, l)
	if !strings.Contains(b.String(), "rate reached when autostop fired (p95>500ms for 3s): 1200.0 tx/s") {
		t.Errorf("text:\n%s", b.String())
	}
	closed := rampRun("c", 1, 12)
	closed.Spec.Load = map[string]string{"model": "closed"}
	if _, ok := RunLoadLimits(closed); ok {
		t.Error("load limits for a closed-loop run")
	}
}

// TestCompareLoadLimits: runs stopped by autostop at different points are
// judged on the highest rate held, not on mean tps over different loads.
func TestCompareLoadLimits(t *testing.T) {
	a, b := rampRun("a", 1, 12), rampRun("b", 2, 22)
	var out bytes.Buffer
	CompareText(&out, []*Group{{Name: "a", Runs: []*store.Run{a}}, {Name: "b", Runs: []*store.Run{b}}}, Metrics[0])
	s := out.String()
	for _, want := range []string{"highest rate held tx/s", "verdict: b held a higher rate than a: +100.0%", "not judged"} {
		if !strings.Contains(s, want) {
			t.Errorf("compare lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "faster") {
		t.Errorf("compare judged mean tps:\n%s", s)
	}
}

func TestHTMLLoadLimitsCards(t *testing.T) {
	html := renderHTML(t, []*store.Run{rampRun("a", 1, 12)})
	for _, want := range []string{"rate when autostop fired", "highest rate held", "p95&gt;500ms for 3s"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
