package session

import (
	"testing"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/store"
)

// TestLatestSamplesKeepsWhatRulesRead: the latest value of each series an
// autostop rule reads, kept when a later sample lacks it; nothing else.
func TestLatestSamplesKeepsWhatRulesRead(t *testing.T) {
	var rules []driver.Rule
	for _, s := range []string{"pg.wait.Lock:tuple>5 for 10s", "host.cpu.busy_pct>90 for 5s", "errors>25/s for 10s"} {
		r, err := driver.ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	l := newLatestSamples(rules)
	l.update([]store.Sample{{Source: "activity", Values: map[string]float64{"pg.wait.Lock:tuple": 7, "pg.active": 3}},
		{Source: "host_cpu", Values: map[string]float64{"host.cpu.busy_pct": 50}}})
	l.update([]store.Sample{{Source: "host_cpu", Values: map[string]float64{"host.cpu.busy_pct": 95}}})
	for name, want := range map[string]float64{"pg.wait.Lock:tuple": 7, "host.cpu.busy_pct": 95} {
		if v, ok := l.get(name); !ok || v != want {
			t.Errorf("%s = %v, %v; want %v", name, v, ok, want)
		}
	}
	if v, ok := l.get("pg.active"); ok {
		t.Errorf("pg.active, read by no rule, kept: %v", v)
	}
	if none := newLatestSamples(nil); len(none.want) != 0 {
		t.Errorf("no rules, yet %v watched", none.want)
	}
}
