package driver

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
)

func mustSchedule(t *testing.T, s string) Schedule {
	t.Helper()
	sch, err := ParseSchedule(s)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// offsets collects every arrival of a schedule (pure arithmetic: the
// schedule's clock is the offset itself, no real time passes).
func offsets(s Schedule, process string) []time.Duration {
	a := newArrivals(s, process, 42)
	var out []time.Duration
	for {
		off, ok := a.next()
		if !ok {
			return out
		}
		out = append(out, off)
	}
}

func countIn(offs []time.Duration, from, to time.Duration) int {
	n := 0
	for _, o := range offs {
		if o > from && o <= to {
			n++
		}
	}
	return n
}

func TestScheduleUniformCountsPerSegment(t *testing.T) {
	s := mustSchedule(t, "const(100,60s) step(100,1000,100,30s) line(1000,0,10s)")
	if got, want := s.Duration(), 60*time.Second+10*30*time.Second+10*time.Second; got != want {
		t.Fatalf("duration %s, want %s", got, want)
	}
	offs := offsets(s, ArrivalUniform)
	// const: exactly rate × duration.
	if n := countIn(offs, -1, 60*time.Second); n != 6000 {
		t.Fatalf("const segment: %d arrivals, want 6000", n)
	}
	// step: 100, 200, … 1000 tx/s, 30 s each.
	for i := 0; i < 10; i++ {
		from := 60*time.Second + time.Duration(i)*30*time.Second
		want := (i + 1) * 100 * 30
		if n := countIn(offs, from, from+30*time.Second); n < want-1 || n > want+1 {
			t.Fatalf("step %d: %d arrivals, want %d", i, n, want)
		}
	}
	// line 1000→0 over 10 s: 5000 arrivals.
	tail := 360 * time.Second
	if n := countIn(offs, tail, tail+10*time.Second+time.Millisecond); n < 4999 || n > 5000 {
		t.Fatalf("line segment: %d arrivals, want 5000", n)
	}
	if total := float64(len(offs)); math.Abs(total-s.Expected(s.Duration())) > 1 {
		t.Fatalf("total %v, expected %v", total, s.Expected(s.Duration()))
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			t.Fatalf("arrival %d goes back in time", i)
		}
	}
}

func TestScheduleNoDriftOverAnHour(t *testing.T) {
	offs := offsets(mustSchedule(t, "const(1000,1h)"), ArrivalUniform)
	if len(offs) != 3600000 {
		t.Fatalf("%d arrivals, want 3600000", len(offs))
	}
	// The k-th arrival is at k/rate from the absolute start, however many
	// came before it.
	for _, k := range []int{1, 1000, 1800000, 3600000} {
		want := time.Duration(k) * time.Millisecond
		if d := offs[k-1] - want; d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("arrival %d at %s, want %s", k, offs[k-1], want)
		}
	}
}

func TestScheduleFractionalRate(t *testing.T) {
	offs := offsets(mustSchedule(t, "const(0.5,10s)"), ArrivalUniform)
	want := []time.Duration{2 * time.Second, 4 * time.Second, 6 * time.Second, 8 * time.Second, 10 * time.Second}
	if len(offs) != len(want) {
		t.Fatalf("arrivals %v, want %v", offs, want)
	}
	for i := range want {
		if d := offs[i] - want[i]; d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("arrivals %v, want %v", offs, want)
		}
	}
}

func TestSchedulePoissonRate(t *testing.T) {
	offs := offsets(mustSchedule(t, "const(1000,60s)"), ArrivalPoisson)
	// 60000 expected, standard deviation √60000 ≈ 245.
	if n := len(offs); n < 60000-1000 || n > 60000+1000 {
		t.Fatalf("%d arrivals, want 60000 ± 1000", n)
	}
	// Same seed, same arrivals.
	again := offsets(mustSchedule(t, "const(1000,60s)"), ArrivalPoisson)
	if len(again) != len(offs) || again[100] != offs[100] {
		t.Fatal("Poisson arrivals are not reproducible from the seed")
	}
}

func TestScheduleRateAt(t *testing.T) {
	s := mustSchedule(t, "line(1,200,200s) const(50,10s)")
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 1}, {100 * time.Second, 100.5}, {200 * time.Second, 50}, {211 * time.Second, 0}} {
		if got := s.RateAt(c.at); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("RateAt(%s) = %v, want %v", c.at, got, c.want)
		}
	}
}

func TestParseScheduleErrors(t *testing.T) {
	for in, want := range map[string]string{
		"line(1,200)":        "line needs (from, to, duration)",
		"const(100)":         "const needs (rate, duration)",
		"step(1,2,3)":        "step needs (from, to, step, duration)",
		"ramp(1,2,3s)":       `unknown segment "ramp"`,
		"const(x,10s)":       `rate "x" is not a rate`,
		"const(10,soon)":     `duration "soon"`,
		"const(10,10s":       "unbalanced parentheses",
		"":                   "empty schedule",
		"const(-1,10s)":      `rate "-1" is not a rate`,
		"step(1,10,0,10s)":   "step must be positive",
		"const(10,10s) junk": "expected name(arguments)",
		// found by FuzzParseSchedule: lengths that overflowed time.Duration
		"const(1,5e9) const(1,5e9)": `duration "5e9" is not a positive duration`,
		"const(1,2e8) const(1,2e8)": "longer than 87600h0m0s in all",
		"step(1,10000,1,2562047h)":  `duration "2562047h" is not a positive duration`,
		"step(1,10000,1,87599h)":    "longer than 87600h0m0s in all",
		"const(1,1e10)":             `duration "1e10" is not a positive duration`,
	} {
		_, err := ParseSchedule(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSchedule(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestParseRule(t *testing.T) {
	r, err := ParseRule("p95>500ms for 10s")
	if err != nil || r.Metric != "p95" || r.Op != ">" || r.Value != 500 || r.For != 10*time.Second {
		t.Fatalf("%+v %v", r, err)
	}
	r, err = ParseRule("p99 > 1.5s for 1m")
	if err != nil || r.Value != 1500 || r.For != time.Minute {
		t.Fatalf("%+v %v", r, err)
	}
	r, err = ParseRule("errors.too_many_connections>1/s for 5s")
	if err != nil || r.Class != pgerr.ClassTooManyConnections {
		t.Fatalf("%+v %v", r, err)
	}
	for in, want := range map[string]string{
		"errors>25 per s for 10s":  "expected METRIC OP VALUE for DURATION",
		"errors.nosuch>1/s for 1s": `unknown error class "nosuch"`,
		"cpu>90 for 10s":           `unknown metric "cpu"`,
		"p95>5ms for never":        `"never" is not a duration`,
		"tps<1 for 1e300":          `"1e300" is not a duration`, // past time.Duration
	} {
		if _, err := ParseRule(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestOpenLoopRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// An arrival every 5 ms up to 1 s; the schedule lasts 1002 ms so
		// that the last arrival is not due at the very instant the run ends.
		clk := clock.NewFake(fakeStart)
		w := &sleepWorkload{sleep: time.Millisecond, clk: clk}
		res, col, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 4, Tick: 100 * time.Millisecond,
			Schedule: mustSchedule(t, "const(200,1002ms)"), Arrival: ArrivalUniform})
		if err != nil {
			t.Fatal(err)
		}
		ok, failed, _, _ := col.total()
		if ok != 200 || failed != 0 || res.Unstarted != 0 {
			t.Fatalf("committed %d (failed %d, unstarted %d), want 200", ok, failed, res.Unstarted)
		}
		// The last arrival (1 s) ends at 1001 ms, and with it the run.
		if d := res.End.Sub(res.Start); d != 1001*time.Millisecond || len(col.ivs) != 11 {
			t.Fatalf("run lasted %s in %d intervals, want 1001ms in 11", d, len(col.ivs))
		}
		for i, iv := range col.ivs {
			tot := iv.Total()
			// Interval i holds the arrivals of the previous 100 ms ending
			// 1 ms after them: 19 in the first (5 … 95 ms), 20 in the
			// others, the arrival at 1 s in the last.
			want := int64(20)
			switch i {
			case 0:
				want = 19
			case 10:
				want = 1
			}
			if tot.Count != want {
				t.Fatalf("interval %d: %d transactions, want %d", i+1, tot.Count, want)
			}
			// Served at once: latency is the 1 ms transaction.
			if !exactly(tot.Latency, 1000) {
				t.Fatalf("interval %d: latency %d..%dµs, want 1000", i+1, tot.Latency.Min(), tot.Latency.Max())
			}
			if i < 10 && iv.TargetRate != 200 {
				t.Fatalf("interval %d: target rate %v, want 200", i+1, iv.TargetRate)
			}
		}
	})
}

// TestOpenLoopCountsQueueing is the coordinated-omission check without a
// database: one client, 20 ms transactions, 100 arrivals per second. The
// client can serve 50/s, so arrivals queue up; their latency must grow with
// the queue while the service time stays at 20 ms.
func TestOpenLoopCountsQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 60 arrivals (every 10 ms up to 600 ms), then a quiet second for
		// the client to work off the queue before the run ends.
		clk := clock.NewFake(fakeStart)
		w := &sleepWorkload{sleep: 20 * time.Millisecond, clk: clk}
		res, col, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 1, Tick: 100 * time.Millisecond,
			Schedule: mustSchedule(t, "const(100,600ms) const(0,1s)"), Arrival: ArrivalUniform})
		if err != nil {
			t.Fatal(err)
		}
		var acc metrics.Accumulator
		for _, iv := range col.ivs {
			acc.Add(iv)
		}
		total := metrics.MergeTx("t", acc.Tx)
		// Transaction i (from 0) arrives at 10·(i+1) ms and runs from
		// 10 + 20·i to 30 + 20·i ms: its latency is 20 + 10·i ms.
		if total.Count != 60 || res.End.Sub(res.Start) != 1210*time.Millisecond {
			t.Fatalf("committed %d by %s, want 60 by 1210ms", total.Count, res.End.Sub(res.Start))
		}
		if !exactly(total.Service, 20000) {
			t.Fatalf("service %d..%dµs, want 20000", total.Service.Min(), total.Service.Max())
		}
		lat := total.Latency
		if !lat.ValuesAreEquivalent(lat.Min(), 20000) || !lat.ValuesAreEquivalent(lat.Max(), 610000) {
			t.Fatalf("latency %d..%dµs, want 20000..610000: queueing was not counted", lat.Min(), lat.Max())
		}
		if p50 := lat.ValueAtQuantile(50); !lat.ValuesAreEquivalent(p50, 310000) {
			t.Fatalf("latency p50 %dµs, want 310000", p50)
		}
	})
}

func TestLatencyLimitSkipsLateArrivals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 100 arrivals (every 5 ms up to 500 ms), then a quiet second for
		// the queue to empty.
		clk := clock.NewFake(fakeStart)
		w := &sleepWorkload{sleep: 20 * time.Millisecond, clk: clk}
		const limit, tx = 30 * time.Millisecond, 20 * time.Millisecond
		_, col, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 1, Tick: 100 * time.Millisecond,
			Schedule: mustSchedule(t, "const(200,500ms) const(0,1s)"), Arrival: ArrivalUniform, LatencyLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var skipped, late, ok int64
		for _, iv := range col.ivs {
			t := iv.Total()
			skipped, late, ok = skipped+t.Skipped, late+t.Late, ok+t.Count
		}
		// The same rule by hand: an arrival taken more than the limit
		// after it was due is skipped (no time spent), one that ends more
		// than the limit after it was due is late.
		var wantSkipped, wantLate, wantOK int64
		var free time.Duration
		for k := 1; k <= 100; k++ {
			due := time.Duration(k) * 5 * time.Millisecond
			start := max(due, free)
			if start-due > limit {
				wantSkipped++
				continue
			}
			free = start + tx
			wantOK++
			if free-due > limit {
				wantLate++
			}
		}
		if ok != wantOK || skipped != wantSkipped || late != wantLate {
			t.Fatalf("ok %d skipped %d late %d, want %d %d %d", ok, skipped, late, wantOK, wantSkipped, wantLate)
		}
		if skipped == 0 || late == 0 {
			t.Fatalf("the test shows nothing: skipped %d late %d", skipped, late)
		}
	})
}

func TestAutostopOnErrorStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		storm := &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}
		clk := clock.NewFake(fakeStart)
		// 7 ms transactions: none ends on a 100 ms tick before 700 ms.
		w := &sleepWorkload{sleep: 7 * time.Millisecond, clk: clk, fail: func(int, int) error { return storm }}
		rule, err := ParseRule("errors.too_many_connections>10/s for 300ms")
		if err != nil {
			t.Fatal(err)
		}
		res, col, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 2, Duration: time.Minute,
			Tick: 100 * time.Millisecond, Autostop: []Rule{rule}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Autostopped || !res.Stopped || !strings.Contains(res.StopReason, "too_many_connections") {
			t.Fatalf("result %+v", res)
		}
		// The rule holds over the first three ticks; the transactions in
		// flight then end at 301 ms, and so does the run.
		if d := res.End.Sub(res.Start); d != 301*time.Millisecond || len(col.ivs) != 4 {
			t.Fatalf("autostop after %s and %d intervals, want 301ms and 4", d, len(col.ivs))
		}
		// 2 clients × 42 by 300 ms; the two in flight then fail in the
		// drain, unfinished.
		ok, failed, _, errs := col.total()
		if ok != 0 || failed != 84 || errs[pgerr.ClassTooManyConnections] != 84 || col.unfinished().Failed != 2 {
			t.Fatalf("ok %d failed %d errors %v unfinished %+v, want 0, 84 and 84 too_many_connections, 2 failed in the drain",
				ok, failed, errs, col.unfinished())
		}
	})
}

func TestWarmupAndRamp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(fakeStart)
		const tx = 7 * time.Millisecond // never ends on a 100 ms tick
		w := &sleepWorkload{sleep: tx, clk: clk}
		res, col, err := stepped(t, context.Background(), clk, w, nilDialer, Config{Clients: 4, Duration: 300 * time.Millisecond,
			Warmup: 300 * time.Millisecond, Ramp: 400 * time.Millisecond, Tick: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		warm := 0
		for _, iv := range col.ivs {
			if iv.Warmup {
				warm++
			}
		}
		// 6 ticks and the final interval when the last transaction in
		// flight at 600 ms ends (client 2's, at 606 ms).
		if warm != 3 || len(col.ivs) != 7 || res.End.Sub(res.Start) != 606*time.Millisecond {
			t.Fatalf("%d warm-up intervals of %d, run of %s; want 3 of 7, 606ms", warm, len(col.ivs), res.End.Sub(res.Start))
		}
		// Ramp: client i starts at i·100 ms.
		for i, iv := range col.ivs[:6] {
			from, to := iv.Start.Sub(res.Start), iv.End.Sub(res.Start)
			var want int64
			for c := range 4 {
				want += endsIn(time.Duration(c)*100*time.Millisecond, tx, from, to)
			}
			if got := iv.Total().Count; got != want {
				t.Fatalf("interval %d: %d transactions, want %d", i+1, got, want)
			}
		}
		if first, last := col.ivs[0].Total().Count, col.ivs[5].Total().Count; first != 14 || last != 57 {
			t.Fatalf("first interval %d tx, sixth %d; want 14 (one client) and 57 (all four)", first, last)
		}
	})
}

// TestRuleWindow feeds synthetic one-second intervals: errors arriving in
// waves (10 every other second) average 5/s over the window.
func TestRuleWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fire := func(rule string, errsAt func(sec int) int, secs int) int {
		rec := metrics.NewRecorder([]string{"x"}, t0)
		h := rec.NewHandle()
		r, err := ParseRule(rule)
		if err != nil {
			t.Fatal(err)
		}
		for s := 1; s <= secs; s++ {
			for i := 0; i < errsAt(s); i++ {
				h.Record(0, t0, t0, t0, pgerr.ClassTooManyConnections)
			}
			for i := 0; i < 100; i++ {
				h.Record(0, t0, t0, t0.Add(10*time.Millisecond), pgerr.ClassNone)
			}
			iv := rec.Tick(t0.Add(time.Duration(s) * time.Second))
			if r.observe(&iv) {
				return s
			}
		}
		return 0
	}
	waves := func(s int) int { return 10 * (s % 2) }
	if got := fire("errors>4/s for 4s", waves, 20); got != 4 {
		t.Errorf("bursty errors at 5/s: rule fired at second %d, want 4", got)
	}
	if got := fire("errors>6/s for 4s", waves, 20); got != 0 {
		t.Errorf("bursty errors at 5/s fired a 6/s rule at second %d", got)
	}
	if got := fire("tps<50 for 3s", func(int) int { return 0 }, 10); got != 0 {
		t.Errorf("100 tps fired tps<50 at second %d", got)
	}
	if got := fire("p95>5ms for 2s", func(int) int { return 0 }, 10); got != 2 {
		t.Errorf("10 ms latency: p95>5ms fired at second %d, want 2", got)
	}
}

func TestSampledRule(t *testing.T) {
	r, err := ParseRule("pg.connections.total>900 for 2s")
	if err != nil || !r.IsSampled() {
		t.Fatalf("%+v %v", r, err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	conns := []float64{950, 100, 950, 950, 950}
	fired := 0
	for s, v := range conns {
		iv := metrics.Interval{Start: t0.Add(time.Duration(s) * time.Second), End: t0.Add(time.Duration(s+1) * time.Second)}
		val := v
		if r.observeSampled(&iv, func(name string) (float64, bool) { return val, name == "pg.connections.total" }) {
			fired = s + 1
			break
		}
	}
	if fired != 4 {
		t.Fatalf("fired after interval %d, want 4 (the streak restarts after the dip)", fired)
	}
	if _, err := ParseRule("host.cpu.busy_pct>90% for 10s"); err != nil {
		t.Fatal(err)
	}
}

// TestStepBelowPrecision: a step too small to move the rate (found by
// FuzzParseSchedule: the segments were appended for ever) gives the one
// rate, held once.
func TestStepBelowPrecision(t *testing.T) {
	for _, in := range []string{"step(0,0,1e-300,1s)", "step(1e20,1e20,1,1s)"} {
		s := mustSchedule(t, in)
		if len(s.segs) != 1 || s.Duration() != time.Second {
			t.Errorf("%s: %d segments over %v, want 1 over 1s", in, len(s.segs), s.Duration())
		}
	}
	if s := mustSchedule(t, "step(100,1000,100,30s) step(1,10,4,1s) step(0.1,0.3,0.1,1s)"); s.String() !=
		"const(100,30s) const(200,30s) const(300,30s) const(400,30s) const(500,30s) const(600,30s) const(700,30s) const(800,30s) const(900,30s) const(1000,30s) const(1,1s) const(5,1s) const(9,1s) const(0.1,1s) const(0.2,1s) const(0.30000000000000004,1s)" {
		t.Errorf("steps: %s", s)
	}
}

// TestOnStartAndEnd: OnStart is told the measured time's start and OnEnd
// its end, once each, whether the planned end or an autostop ends it.
func TestOnStartAndEnd(t *testing.T) {
	storm := &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}
	rule, err := ParseRule("errors.too_many_connections>10/s for 300ms")
	if err != nil {
		t.Fatal(err)
	}
	for _, autostop := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			clk := clock.NewFake(fakeStart)
			w := &sleepWorkload{sleep: 7 * time.Millisecond, clk: clk}
			cfg := Config{Clients: 2, Duration: 500 * time.Millisecond, Tick: 100 * time.Millisecond}
			if autostop {
				w.fail = func(int, int) error { return storm }
				cfg.Autostop = []Rule{rule}
			}
			var starts, ends []time.Time
			cfg.OnStart = func(at time.Time) { starts = append(starts, at) }
			cfg.OnEnd = func(at time.Time) { ends = append(ends, at) }
			res, _, err := stepped(t, context.Background(), clk, w, nilDialer, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(starts) != 1 || !starts[0].Equal(res.Start) || len(ends) != 1 || !ends[0].Equal(res.Measured) || res.Autostopped != autostop {
				t.Fatalf("autostop %v: told start %v and end %v; the run's %s to %s (autostopped %v)", autostop, starts, ends, res.Start, res.Measured, res.Autostopped)
			}
			if want := res.Start.Add(cfg.Duration); !autostop && !res.Measured.Equal(want) {
				t.Fatalf("measured until %s, want %s", res.Measured, want)
			}
		})
	}
}
