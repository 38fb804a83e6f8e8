package driver

import (
	"math"
	"testing"
	"time"
)

// FuzzParseSchedule: any text is a schedule or an error; a schedule has a
// positive length, finite non-negative rates and arrivals that never go
// back in time nor past its end.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{
		"const(100,60s) step(100,1000,100,30s) line(1000,0,10s)", "const(1000,1h)", "const(0.5,10s)",
		"line(1,200,200s) const(50,10s)", "const(100,305ms)", "const(200,500ms) const(0,1s)", "const(100,600ms),const(0,1s)",
		"step(1000,100,100,1s)", "line(0,0,1)", "const(1e308,1s)", "const(1,9e9) const(1,9e9)", "step(0,1,1e-300,1s)",
		"const(1,2562047h)", "line(1, 2, 3s)", "const((1),1s)", "const(1,1s", "x()",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sch, err := ParseSchedule(s)
		if err != nil {
			return
		}
		d := sch.Duration()
		if d <= 0 {
			t.Fatalf("%q: duration %v", s, d)
		}
		for _, at := range []time.Duration{0, d / 3, d / 2, d - 1, d} {
			if r := sch.RateAt(at); r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
				t.Fatalf("%q: rate %v at %v", s, r, at)
			}
		}
		if n := sch.Expected(d); n < 0 || math.IsNaN(n) {
			t.Fatalf("%q: %v arrivals expected", s, n)
		}
		_ = sch.MaxRate()
		if again, err := ParseSchedule(sch.String()); err != nil || again.Duration() != d {
			t.Fatalf("%q: String() = %q does not parse back (%v)", s, sch.String(), err)
		}
		for _, process := range []string{ArrivalUniform, ArrivalPoisson} {
			a := newArrivals(sch, process, 1)
			prev := time.Duration(0)
			for range 1000 {
				off, ok := a.next()
				if !ok {
					break
				}
				if off < prev || off > d {
					t.Fatalf("%q (%s): arrival at %v after %v (length %v)", s, process, off, prev, d)
				}
				prev = off
			}
		}
	})
}

// FuzzParseRule: any text is an autostop rule or an error; a rule has a
// known metric, an operator, a finite value and a positive window, and its
// text parses back to the same rule.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{
		"p95>500ms for 10s", "p99 > 1.5s for 1m", "errors.too_many_connections>1/s for 5s", "errors>25/s for 10s",
		"tps<10 for 30s", "pg.connections.total>900 for 2s", "host.cpu.busy_pct>90% for 10s", "max>=1s for 1",
		"errors.none>1/s for 1s", "p50<=0 for 0.5", "tps<1e400 for 1s", "tps<1 for 1e300", "p99>1 for -1s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		if r.For <= 0 || math.IsNaN(r.Value) || math.IsInf(r.Value, 0) || r.Value < 0 {
			t.Fatalf("%q: window %v, value %v", s, r.For, r.Value)
		}
		again, err := ParseRule(r.Text)
		if err != nil || again.Rule != r.Rule {
			t.Fatalf("%q: its text %q parses to %+v, %v; want %+v", s, r.Text, again.Rule, err, r.Rule)
		}
	})
}
