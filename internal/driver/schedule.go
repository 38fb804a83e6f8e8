package driver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Schedule is an open-loop arrival rate over time: segments played one
// after another, yandex.tank style. The rate is in transactions per second
// and may be fractional.
//
//	line(a,b,dur)        rate goes linearly from a to b over dur
//	const(r,dur)         rate r for dur
//	step(a,b,step,dur)   rate a, a+step, … up to b, each held for dur
//
// Segments are separated by spaces (or commas outside parentheses):
// "const(100,60s) step(100,1000,100,30s)".
type Schedule struct {
	segs []segment
}

// segment is a linear rate from From to To over Dur (From == To for const).
type segment struct {
	From, To float64
	Dur      time.Duration
}

// ParseSchedule parses a schedule; its errors name the offending token and
// what was expected.
func ParseSchedule(s string) (Schedule, error) {
	var sch Schedule
	toks, err := splitSegments(s)
	if err != nil {
		return sch, err
	}
	if len(toks) == 0 {
		return sch, fmt.Errorf("empty schedule: expected line(from,to,duration), const(rate,duration) or step(from,to,step,duration)")
	}
	for _, tok := range toks {
		open := strings.IndexByte(tok, '(')
		if open < 0 || !strings.HasSuffix(tok, ")") {
			return sch, fmt.Errorf("schedule %q: expected name(arguments), e.g. const(100,60s)", tok)
		}
		name := strings.TrimSpace(tok[:open])
		var args []string
		for _, a := range strings.Split(tok[open+1:len(tok)-1], ",") {
			args = append(args, strings.TrimSpace(a))
		}
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		bad := func(want string) error {
			return fmt.Errorf("schedule %q: %s needs (%s)", tok, name, want)
		}
		num := func(i int, what string) (float64, error) {
			v, err := strconv.ParseFloat(args[i], 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return 0, fmt.Errorf("schedule %q: %s %q is not a rate (a number ≥ 0, tx/s)", tok, what, args[i])
			}
			return v, nil
		}
		dur := func(i int) (time.Duration, error) {
			d, err := parseSeconds(args[i])
			if err != nil || d <= 0 || d > maxScheduleLength {
				return 0, fmt.Errorf("schedule %q: duration %q is not a positive duration (30s, 5m, 1h or seconds)", tok, args[i])
			}
			return d, nil
		}
		switch name {
		case "line":
			if len(args) != 3 {
				return sch, bad("from, to, duration")
			}
			a, err := num(0, "from")
			if err != nil {
				return sch, err
			}
			b, err := num(1, "to")
			if err != nil {
				return sch, err
			}
			d, err := dur(2)
			if err != nil {
				return sch, err
			}
			sch.segs = append(sch.segs, segment{From: a, To: b, Dur: d})
		case "const":
			if len(args) != 2 {
				return sch, bad("rate, duration")
			}
			r, err := num(0, "rate")
			if err != nil {
				return sch, err
			}
			d, err := dur(1)
			if err != nil {
				return sch, err
			}
			sch.segs = append(sch.segs, segment{From: r, To: r, Dur: d})
		case "step":
			if len(args) != 4 {
				return sch, bad("from, to, step, duration")
			}
			a, err := num(0, "from")
			if err != nil {
				return sch, err
			}
			b, err := num(1, "to")
			if err != nil {
				return sch, err
			}
			st, err := num(2, "step")
			if err != nil {
				return sch, err
			}
			if st <= 0 {
				return sch, fmt.Errorf("schedule %q: step must be positive", tok)
			}
			d, err := dur(3)
			if err != nil {
				return sch, err
			}
			n := math.Abs(b-a) / st
			if n > 10000 {
				return sch, fmt.Errorf("schedule %q: %.0f steps is too many", tok, n)
			}
			dir := 1.0
			if b < a {
				dir = -1
			}
			// a, a+step, ... up to b; counted, not compared with b, so a
			// step below b's precision cannot loop for ever.
			for i := range int(n+1e-9) + 1 {
				r := a + dir*float64(i)*st
				sch.segs = append(sch.segs, segment{From: r, To: r, Dur: d})
			}
		default:
			return sch, fmt.Errorf("schedule %q: unknown segment %q (use line, const or step)", tok, name)
		}
		if sch.tooLong() {
			return sch, fmt.Errorf("schedule %q: longer than %v in all", s, maxScheduleLength)
		}
	}
	return sch, nil
}

// maxScheduleLength bounds a schedule's total length, so that no offset
// into it overflows a time.Duration.
const maxScheduleLength = 10 * 365 * 24 * time.Hour

// tooLong reports whether the segments add up to more than
// maxScheduleLength (each is at most that: the sum cannot overflow).
func (s Schedule) tooLong() bool {
	var total time.Duration
	for _, g := range s.segs {
		if g.Dur > maxScheduleLength-total {
			return true
		}
		total += g.Dur
	}
	return false
}

// ConstSchedule is a constant rate for d (-R with -T).
func ConstSchedule(rate float64, d time.Duration) Schedule {
	return Schedule{segs: []segment{{From: rate, To: rate, Dur: d}}}
}

// splitSegments splits at spaces and commas that are outside parentheses.
func splitSegments(s string) ([]string, error) {
	var toks []string
	depth, start := 0, -1
	for i, c := range s {
		switch {
		case c == '(':
			depth++
			if depth > 1 {
				return nil, fmt.Errorf("schedule %q: nested parentheses", s)
			}
		case c == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("schedule %q: unbalanced parentheses", s)
			}
		case depth == 0 && (c == ' ' || c == ',' || c == '\t'):
			if start >= 0 {
				toks = append(toks, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("schedule %q: unbalanced parentheses", s)
	}
	if start >= 0 {
		toks = append(toks, s[start:])
	}
	return toks, nil
}

// parseSeconds reads "30s", "5m", "1h30m" or a bare number of seconds.
func parseSeconds(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if !(math.Abs(v) < float64(math.MaxInt64)/float64(time.Second)) {
			return 0, fmt.Errorf("%s seconds is out of range", s)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}

// Duration is the schedule's total length.
func (s Schedule) Duration() time.Duration {
	var d time.Duration
	for _, g := range s.segs {
		d += g.Dur
	}
	return d
}

// Empty reports whether the schedule has no segment (a closed loop).
func (s Schedule) Empty() bool { return len(s.segs) == 0 }

// Constant lists the stretches of s at one unchanging rate (its const
// segments, or all of -R's), as offsets [from, to) from its start.
func (s Schedule) Constant() [][2]time.Duration {
	var out [][2]time.Duration
	var at time.Duration
	for _, g := range s.segs {
		if g.From == g.To && g.From > 0 {
			if n := len(out); n > 0 && out[n-1][1] == at {
				out[n-1][1] = at + g.Dur // adjoining: one stretch
			} else {
				out = append(out, [2]time.Duration{at, at + g.Dur})
			}
		}
		at += g.Dur
	}
	return out
}

// RateAt is the target rate at offset t from the start; 0 after the end.
func (s Schedule) RateAt(t time.Duration) float64 {
	for _, g := range s.segs {
		if t < g.Dur {
			return g.From + (g.To-g.From)*t.Seconds()/g.Dur.Seconds()
		}
		t -= g.Dur
	}
	return 0
}

// Expected is the number of arrivals the schedule asks for in [0, t): the
// integral of the rate.
func (s Schedule) Expected(t time.Duration) float64 {
	var n float64
	for _, g := range s.segs {
		d := g.Dur
		if t < d {
			d = t
		}
		x, D := d.Seconds(), g.Dur.Seconds()
		n += g.From*x + (g.To-g.From)*x*x/(2*D)
		t -= d
		if t <= 0 {
			break
		}
	}
	return n
}

// MaxRate is the highest rate of the schedule.
func (s Schedule) MaxRate() float64 {
	m := 0.0
	for _, g := range s.segs {
		m = max(m, g.From, g.To)
	}
	return m
}

func (s Schedule) String() string {
	var parts []string
	for _, g := range s.segs {
		if g.From == g.To {
			parts = append(parts, fmt.Sprintf("const(%g,%s)", g.From, g.Dur))
		} else {
			parts = append(parts, fmt.Sprintf("line(%g,%g,%s)", g.From, g.To, g.Dur))
		}
	}
	return strings.Join(parts, " ")
}

// Arrival processes.
const (
	ArrivalPoisson = "poisson" // exponential gaps: independent users
	ArrivalUniform = "uniform" // evenly spaced
)

// arrivals yields the offsets from the start at which transactions are
// due. The k-th arrival is where the schedule's cumulative count Λ(t)
// reaches the k-th point of a unit-rate process (1, 2, 3… for uniform,
// sums of Exp(1) gaps for Poisson), so each offset is computed from the
// absolute start and errors never accumulate (no drift).
type arrivals struct {
	segs    []segment
	i       int           // current segment
	segT0   time.Duration // offset of segment i
	lam0    float64       // Λ at the start of segment i
	target  float64       // Λ value of the next arrival
	rng     *rand.Rand    // nil: uniform
	started bool
}

func newArrivals(s Schedule, process string, seed uint64) *arrivals {
	a := &arrivals{segs: s.segs}
	if process != ArrivalUniform {
		a.rng = rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	}
	return a
}

// next returns the next arrival offset; false when the schedule is over.
func (a *arrivals) next() (time.Duration, bool) {
	if a.rng != nil {
		a.target += a.rng.ExpFloat64()
	} else {
		a.target++
	}
	for a.i < len(a.segs) {
		g := a.segs[a.i]
		D := g.Dur.Seconds()
		lamSeg := (g.From + g.To) / 2 * D // arrivals in the whole segment
		need := a.target - a.lam0
		if need <= lamSeg {
			// Solve From·x + (To−From)·x²/(2D) = need for x in [0, D],
			// in the form that stays exact when To == From.
			k := (g.To - g.From) / (2 * D)
			x := 2 * need / (g.From + math.Sqrt(g.From*g.From+4*k*need))
			if math.IsNaN(x) || math.IsInf(x, 0) {
				x = D
			}
			return a.segT0 + time.Duration(math.Min(x, D)*float64(time.Second)), true
		}
		a.lam0 += lamSeg
		a.segT0 += g.Dur
		a.i++
	}
	return 0, false
}
