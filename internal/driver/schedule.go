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
		c, err := parseCall(tok)
		if err != nil {
			return sch, err
		}
		var segs []segment
		switch c.name {
		case "line":
			segs, err = c.line()
		case "const":
			segs, err = c.constant()
		case "step":
			segs, err = c.steps()
		default:
			err = fmt.Errorf("schedule %q: unknown segment %q (use line, const or step)", tok, c.name)
		}
		if err != nil {
			return sch, err
		}
		sch.segs = append(sch.segs, segs...)
		if sch.tooLong() {
			return sch, fmt.Errorf("schedule %q: longer than %v in all", s, maxScheduleLength)
		}
	}
	return sch, nil
}

// segmentCall is one segment of a schedule as written: name(args).
type segmentCall struct {
	tok, name string
	args      []string
}

func parseCall(tok string) (segmentCall, error) {
	open := strings.IndexByte(tok, '(')
	if open < 0 || !strings.HasSuffix(tok, ")") {
		return segmentCall{}, fmt.Errorf("schedule %q: expected name(arguments), e.g. const(100,60s)", tok)
	}
	c := segmentCall{tok: tok, name: strings.TrimSpace(tok[:open])}
	for _, a := range strings.Split(tok[open+1:len(tok)-1], ",") {
		c.args = append(c.args, strings.TrimSpace(a))
	}
	if len(c.args) == 1 && c.args[0] == "" {
		c.args = nil
	}
	return c, nil
}

// want checks the number of arguments; names lists them for the error.
func (c segmentCall) want(n int, names string) error {
	if len(c.args) != n {
		return fmt.Errorf("schedule %q: %s needs (%s)", c.tok, c.name, names)
	}
	return nil
}

// rates parses the arguments at idx as rates named by what.
func (c segmentCall) rates(idx []int, what []string) ([]float64, error) {
	out := make([]float64, len(idx))
	for k, i := range idx {
		v, err := strconv.ParseFloat(c.args[i], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("schedule %q: %s %q is not a rate (a number ≥ 0, tx/s)", c.tok, what[k], c.args[i])
		}
		out[k] = v
	}
	return out, nil
}

// dur parses argument i as a segment's length.
func (c segmentCall) dur(i int) (time.Duration, error) {
	d, err := parseSeconds(c.args[i])
	if err != nil || d <= 0 || d > maxScheduleLength {
		return 0, fmt.Errorf("schedule %q: duration %q is not a positive duration (30s, 5m, 1h or seconds)", c.tok, c.args[i])
	}
	return d, nil
}

// line is line(from,to,duration).
func (c segmentCall) line() ([]segment, error) {
	if err := c.want(3, "from, to, duration"); err != nil {
		return nil, err
	}
	r, err := c.rates([]int{0, 1}, []string{"from", "to"})
	if err != nil {
		return nil, err
	}
	d, err := c.dur(2)
	if err != nil {
		return nil, err
	}
	return []segment{{From: r[0], To: r[1], Dur: d}}, nil
}

// constant is const(rate,duration).
func (c segmentCall) constant() ([]segment, error) {
	if err := c.want(2, "rate, duration"); err != nil {
		return nil, err
	}
	r, err := c.rates([]int{0}, []string{"rate"})
	if err != nil {
		return nil, err
	}
	d, err := c.dur(1)
	if err != nil {
		return nil, err
	}
	return []segment{{From: r[0], To: r[0], Dur: d}}, nil
}

// steps is step(from,to,step,duration): constant segments a, a+step, …
// up to b.
func (c segmentCall) steps() ([]segment, error) {
	if err := c.want(4, "from, to, step, duration"); err != nil {
		return nil, err
	}
	r, err := c.rates([]int{0, 1, 2}, []string{"from", "to", "step"})
	if err != nil {
		return nil, err
	}
	a, b, st := r[0], r[1], r[2]
	if st <= 0 {
		return nil, fmt.Errorf("schedule %q: step must be positive", c.tok)
	}
	d, err := c.dur(3)
	if err != nil {
		return nil, err
	}
	n := math.Abs(b-a) / st
	if n > 10000 {
		return nil, fmt.Errorf("schedule %q: %.0f steps is too many", c.tok, n)
	}
	dir := 1.0
	if b < a {
		dir = -1
	}
	// a, a+step, ... up to b; counted, not compared with b, so a step
	// below b's precision cannot loop for ever.
	var segs []segment
	for i := range int(n+1e-9) + 1 {
		v := a + dir*float64(i)*st
		segs = append(segs, segment{From: v, To: v, Dur: d})
	}
	return segs, nil
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
