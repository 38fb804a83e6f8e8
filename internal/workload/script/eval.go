package script

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// Limits of pgbench's random functions.
const (
	minGaussianParam = 2.0
	minZipfianParam  = 1.001
	maxZipfianParam  = 1000.0
)

// variable is one slot of a client's variables. A variable set from text
// (-D, \gset, \setshell) keeps the text and is converted on first use in
// an expression, as pgbench does; one set by \set keeps its value and
// writes its text when a statement needs it.
type variable struct {
	val  value
	text []byte // valid when hasText
	set  bool
	// hasText: text holds the variable's text form
	hasText bool
}

// state is what an expression sees: a client's variables and random
// sequence.
type state struct {
	vars  []variable
	rng   prng
	names []string // slot -> name, for errors
	debug io.Writer
	where func() string // "script=0,command=3" for debug()
}

func (s *state) setValue(slot int, v value) {
	x := &s.vars[slot]
	x.val, x.set, x.hasText = v, true, false
}

func (s *state) setText(slot int, t []byte) {
	x := &s.vars[slot]
	x.text = append(x.text[:0], t...)
	x.val, x.set, x.hasText = value{}, true, true
}

// text returns the variable's text form; ok is false when it is unset.
func (s *state) text(slot int) ([]byte, bool) {
	x := &s.vars[slot]
	if !x.set {
		return nil, false
	}
	if !x.hasText {
		x.text = x.val.appendText(x.text[:0])
		x.hasText = true
	}
	return x.text, true
}

// formatText makes the text form of the variables in slots that \set
// set (text's), before a statement's text is built: out of the builder's
// frame, which its appends make large, so that formatting is not under it
// on a client's stack (see workload.SmallStacker).
//
//go:noinline
func (s *state) formatText(slots []int) {
	for _, slot := range slots {
		if x := &s.vars[slot]; x.set && !x.hasText {
			s.text(slot)
		}
	}
}

// intText is the most bytes of an integer's text (-9223372036854775808).
const intText = 20

// reserveText gives each variable that the SQL commands of scripts refer
// to room for an integer's text, in one allocation: the first formatting
// of its text, under a client's first statement, then allocates nothing
// (an allocation there, on the client's deepest stack, would outgrow
// the 2 KB it starts with; see workload.SmallStacker).
func (s *state) reserveText(scripts []*Script) {
	var slots []int
	for _, sc := range scripts {
		for i := range sc.cmds {
			if c := &sc.cmds[i]; c.kind == cSQL {
				for _, slot := range c.refs {
					if !slices.Contains(slots, slot) {
						slots = append(slots, slot)
					}
				}
			}
		}
	}
	buf := make([]byte, len(slots)*intText)
	for i, slot := range slots {
		s.vars[slot].text = buf[i*intText : i*intText : (i+1)*intText]
	}
}

func (s *state) get(slot int) (value, error) {
	x := &s.vars[slot]
	if !x.set {
		return value{}, errorf("undefined variable %q", s.names[slot])
	}
	if x.val.k == kNone {
		v, ok := parseText(string(x.text))
		if !ok {
			return value{}, errorf("malformed variable %q value: %q", s.names[slot], x.text)
		}
		x.val = v
	}
	return x.val, nil
}

// arg evaluates an operand: constants and variables without a call of
// eval (the common operands of pgbench's scripts).
func (s *state) arg(n *node) (value, error) {
	if n.op == opConst {
		return n.val, nil
	}
	if n.op == opVar {
		if x := &s.vars[n.slot]; x.set && x.val.k != kNone {
			return x.val, nil
		}
	}
	return s.eval(n)
}

func (s *state) eval(n *node) (value, error) {
	switch n.op {
	case opConst:
		return n.val, nil
	case opVar:
		if x := &s.vars[n.slot]; x.set && x.val.k != kNone {
			return x.val, nil
		}
		return s.get(n.slot)
	case opAdd, opSub, opMul, opRandom:
		// The hot path of pgbench's scripts (random(1, 100000 * :scale)):
		// two integers, computed here; anything else takes the general
		// path below.
		a, err := s.arg(n.args[0])
		if err != nil {
			return value{}, err
		}
		b, err := s.arg(n.args[1])
		if err != nil {
			return value{}, err
		}
		if a.k == kInt && b.k == kInt {
			switch n.op {
			case opAdd:
				if v := a.i + b.i; (v > a.i) == (b.i > 0) {
					return intVal(v), nil
				}
			case opSub:
				if v := a.i - b.i; (v < a.i) == (b.i > 0) {
					return intVal(v), nil
				}
			case opMul:
				if v := a.i * b.i; a.i != 0 && a.i != -1 && b.i != -1 && v/a.i == b.i || a.i == 0 || b.i == 0 {
					return intVal(v), nil
				}
			case opRandom:
				if d := b.i - a.i; a.i <= b.i && d >= 0 && d != math.MaxInt64 {
					return intVal(s.rng.random(a.i, b.i)), nil
				}
			}
		}
		return s.applyPair(n.op, a, b)
	}
	return s.evalOther(n)
}

// applyPair applies o to a and b: NULL if either is.
//
//go:noinline
func (s *state) applyPair(o op, a, b value) (value, error) {
	if a.k == kNull || b.k == kNull {
		return value{k: kNull}, nil
	}
	return s.apply(o, []value{a, b})
}

// evalOther evaluates the operators and functions eval leaves, out of
// eval's frame: eval is on a client's stack under every \set (twice
// under pgbench's random(1, 100000 * :scale)), which has to fit the 2 KB
// a goroutine starts with (workload.SmallStacker).
//
//go:noinline
func (s *state) evalOther(n *node) (value, error) {
	switch n.op {
	case opAnd, opOr:
		a, err := s.eval(n.args[0])
		if err != nil || a.k == kNull {
			return a, err
		}
		ba, err := a.toBool()
		if err != nil {
			return value{}, err
		}
		if n.op == opAnd && !ba || n.op == opOr && ba {
			return boolVal(ba), nil
		}
		b, err := s.eval(n.args[1])
		if err != nil || b.k == kNull {
			return b, err
		}
		bb, err := b.toBool()
		return boolVal(bb), err
	case opCase:
		for i := 0; i+1 < len(n.args); i += 2 {
			c, err := s.eval(n.args[i])
			if err != nil {
				return value{}, err
			}
			if c.truth() {
				return s.eval(n.args[i+1])
			}
		}
		return s.eval(n.args[len(n.args)-1])
	}
	// Strict functions: arguments first; a NULL argument makes NULL
	// (except IS and debug).
	var buf [4]value
	args := buf[:0]
	hasNull := false
	for _, a := range n.args {
		v, err := s.eval(a)
		if err != nil {
			return value{}, err
		}
		hasNull = hasNull || v.k == kNull
		args = append(args, v)
	}
	if hasNull && n.op != opIs && n.op != opDebug {
		return value{k: kNull}, nil
	}
	return s.apply(n.op, args)
}

func (s *state) apply(o op, args []value) (value, error) {
	switch o {
	case opAdd, opSub, opMul, opDiv, opMod, opEq, opNe, opLe, opLt:
		l, r := args[0], args[1]
		if (l.k == kDouble || r.k == kDouble) && o != opMod {
			ld, err := l.toDouble()
			if err != nil {
				return value{}, err
			}
			rd, err := r.toDouble()
			if err != nil {
				return value{}, err
			}
			switch o {
			case opAdd:
				return doubleVal(ld + rd), nil
			case opSub:
				return doubleVal(ld - rd), nil
			case opMul:
				return doubleVal(ld * rd), nil
			case opDiv:
				return doubleVal(ld / rd), nil
			case opEq:
				return boolVal(ld == rd), nil
			case opNe:
				return boolVal(ld != rd), nil
			case opLe:
				return boolVal(ld <= rd), nil
			default:
				return boolVal(ld < rd), nil
			}
		}
		li, err := l.toInt()
		if err != nil {
			return value{}, err
		}
		ri, err := r.toInt()
		if err != nil {
			return value{}, err
		}
		switch o {
		case opAdd:
			v := li + ri
			if (v > li) != (ri > 0) {
				return value{}, errorf("bigint add out of range")
			}
			return intVal(v), nil
		case opSub:
			v := li - ri
			if (v < li) != (ri > 0) {
				return value{}, errorf("bigint sub out of range")
			}
			return intVal(v), nil
		case opMul:
			v := li * ri
			if li != 0 && (v/li != ri || li == -1 && ri == math.MinInt64) || ri == -1 && li == math.MinInt64 {
				return value{}, errorf("bigint mul out of range")
			}
			return intVal(v), nil
		case opEq:
			return boolVal(li == ri), nil
		case opNe:
			return boolVal(li != ri), nil
		case opLe:
			return boolVal(li <= ri), nil
		case opLt:
			return boolVal(li < ri), nil
		}
		// div, mod
		if ri == 0 {
			return value{}, errorf("division by zero")
		}
		if ri == -1 {
			if o == opDiv {
				if li == math.MinInt64 {
					return value{}, errorf("bigint div out of range")
				}
				return intVal(-li), nil
			}
			return intVal(0), nil
		}
		if o == opDiv {
			return intVal(li / ri), nil
		}
		return intVal(li % ri), nil
	case opBitAnd, opBitOr, opBitXor, opLsh, opRsh:
		li, err := args[0].toInt()
		if err != nil {
			return value{}, err
		}
		ri, err := args[1].toInt()
		if err != nil {
			return value{}, err
		}
		switch o {
		case opBitAnd:
			return intVal(li & ri), nil
		case opBitOr:
			return intVal(li | ri), nil
		case opBitXor:
			return intVal(li ^ ri), nil
		case opLsh:
			return intVal(li << uint64(ri&63)), nil
		default:
			return intVal(li >> uint64(ri&63)), nil
		}
	case opNot:
		b, err := args[0].toBool()
		return boolVal(!b), err
	case opIs:
		return boolVal(args[0].k == args[1].k && args[0].i == args[1].i), nil
	case opPi:
		return doubleVal(math.Pi), nil
	case opAbs:
		if args[0].k == kInt {
			return intVal(abs64(args[0].i)), nil
		}
		if args[0].k == kDouble {
			return doubleVal(math.Abs(args[0].f)), nil
		}
		return value{}, errorf("cannot coerce %s to number", args[0].k)
	case opDebug:
		if s.debug != nil {
			v := args[0]
			fmt.Fprintf(s.debug, "debug(%s): ", s.where())
			switch v.k {
			case kNull:
				fmt.Fprintln(s.debug, "null")
			case kBool:
				fmt.Fprintf(s.debug, "boolean %t\n", v.i != 0)
			case kInt:
				fmt.Fprintf(s.debug, "int %d\n", v.i)
			default:
				fmt.Fprintf(s.debug, "double %s\n", v.appendText(nil))
			}
		}
		return args[0], nil
	case opDouble, opSqrt, opLn, opExp:
		d, err := args[0].toDouble()
		if err != nil {
			return value{}, err
		}
		switch o {
		case opSqrt:
			d = math.Sqrt(d)
		case opLn:
			d = math.Log(d)
		case opExp:
			d = math.Exp(d)
		}
		return doubleVal(d), nil
	case opInt:
		i, err := args[0].toInt()
		return intVal(i), err
	case opLeast, opGreatest:
		return extremum(o, args)
	case opRandom, opRandExp, opRandGauss, opRandZipf:
		return s.random(o, args)
	case opPow:
		l, err := args[0].toDouble()
		if err != nil {
			return value{}, err
		}
		r, err := args[1].toDouble()
		return doubleVal(math.Pow(l, r)), err
	case opHashFNV, opHashMurmur:
		v, err := args[0].toInt()
		if err != nil {
			return value{}, err
		}
		seed, err := args[1].toInt()
		if err != nil {
			return value{}, err
		}
		if o == opHashFNV {
			return intVal(hashFNV1a(v, uint64(seed))), nil
		}
		return intVal(hashMurmur2(v, uint64(seed))), nil
	case opPermute:
		var iv [3]int64
		for i := range iv {
			x, err := args[i].toInt()
			if err != nil {
				return value{}, err
			}
			iv[i] = x
		}
		if iv[1] <= 0 {
			return value{}, errorf("permute size parameter must be greater than zero")
		}
		return intVal(permute(iv[0], iv[1], iv[2])), nil
	}
	return value{}, errorf("internal error: unknown operation %d", o)
}

func abs64(i int64) int64 {
	if i < 0 {
		return -i
	}
	return i
}

func extremum(o op, args []value) (value, error) {
	double := false
	for _, a := range args {
		double = double || a.k == kDouble
	}
	if double {
		var m float64
		for i, a := range args {
			d, err := a.toDouble()
			if err != nil {
				return value{}, err
			}
			if i == 0 || o == opLeast && d < m || o == opGreatest && d > m {
				m = d
			}
		}
		return doubleVal(m), nil
	}
	var m int64
	for i, a := range args {
		d, err := a.toInt()
		if err != nil {
			return value{}, err
		}
		if i == 0 || o == opLeast && d < m || o == opGreatest && d > m {
			m = d
		}
	}
	return intVal(m), nil
}

func (s *state) random(o op, args []value) (value, error) {
	lo, err := args[0].toInt()
	if err != nil {
		return value{}, err
	}
	hi, err := args[1].toInt()
	if err != nil {
		return value{}, err
	}
	if lo > hi {
		return value{}, errorf("empty range given to random")
	}
	if d := hi - lo; d < 0 || d == math.MaxInt64 {
		return value{}, errorf("random range is too large")
	}
	if o == opRandom {
		return intVal(s.rng.random(lo, hi)), nil
	}
	param, err := args[2].toDouble()
	if err != nil {
		return value{}, err
	}
	switch o {
	case opRandGauss:
		if param < minGaussianParam {
			return value{}, errorf("gaussian parameter must be at least %f (not %f)", minGaussianParam, param)
		}
		return intVal(s.rng.gaussian(lo, hi, param)), nil
	case opRandZipf:
		if param < minZipfianParam || param > maxZipfianParam {
			return value{}, errorf("zipfian parameter must be in range [%.3f, %.0f] (not %f)", minZipfianParam, maxZipfianParam, param)
		}
		return intVal(s.rng.zipfian(lo, hi, param)), nil
	}
	if param <= 0 {
		return value{}, errorf("exponential parameter must be greater than zero (not %f)", param)
	}
	return intVal(s.rng.exponential(lo, hi, param)), nil
}
