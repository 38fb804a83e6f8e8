package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pgarena/pgarena/internal/lazy"
)

// op is an expression node's operation.
type op uint8

const (
	opConst op = iota
	opVar
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opEq
	opNe
	opLe
	opLt
	opBitAnd
	opBitOr
	opBitXor
	opLsh
	opRsh
	opNot
	opAnd
	opOr
	opCase // args: cond, then, cond, then, ..., else
	opIs
	opPi
	opAbs
	opDebug
	opDouble
	opSqrt
	opLn
	opExp
	opInt
	opLeast
	opGreatest
	opRandom
	opRandExp
	opRandGauss
	opRandZipf
	opPow
	opHashFNV
	opHashMurmur
	opPermute
)

// node is one node of a compiled expression. Variables are slots of the
// program's variable table, resolved when the script is parsed.
type node struct {
	op   op
	val  value // opConst
	slot int   // opVar
	args []*node
}

// function describes one of pgbench's functions: its operation and how
// many arguments it takes (max -1: any number from min on).
type function struct {
	op       op
	min, max int
}

// functions are pgbench's (PostgreSQL 17 documentation, "Built-in
// Functions"). hash, hash_* and permute take an optional seed, by default
// :default_seed.
var functions = lazy.Value[map[string]function]{New: buildFunctions}

func buildFunctions() map[string]function {
	return map[string]function{
		"abs": {opAbs, 1, 1}, "debug": {opDebug, 1, 1}, "double": {opDouble, 1, 1},
		"exp": {opExp, 1, 1}, "greatest": {opGreatest, 1, -1}, "least": {opLeast, 1, -1},
		"hash": {opHashMurmur, 1, 2}, "hash_fnv1a": {opHashFNV, 1, 2}, "hash_murmur2": {opHashMurmur, 1, 2},
		"int": {opInt, 1, 1}, "ln": {opLn, 1, 1}, "mod": {opMod, 2, 2}, "permute": {opPermute, 2, 3},
		"pi": {opPi, 0, 0}, "pow": {opPow, 2, 2}, "power": {opPow, 2, 2}, "random": {opRandom, 2, 2},
		"random_exponential": {opRandExp, 3, 3}, "random_gaussian": {opRandGauss, 3, 3},
		"random_zipfian": {opRandZipf, 3, 3}, "sqrt": {opSqrt, 1, 1},
	}
}

// Expression tokens.
type tokKind uint8

const (
	tEOF tokKind = iota
	tInt
	tDouble
	tVar
	tIdent
	tOp // text holds the operator
)

type token struct {
	kind tokKind
	text string
	ival int64
	fval float64
	pos  int // byte offset in the expression
	// maxPlusOne: the literal 9223372036854775808, valid only after a
	// unary minus
	maxPlusOne bool
}

// exprParser parses one pgbench expression (exprparse.y's grammar) by
// recursive descent, operators from lowest to highest precedence: OR, AND,
// NOT, IS/ISNULL/NOTNULL, comparisons, bitwise | # & << >>, + -, * / %,
// unary + - ~.
type exprParser struct {
	src  string
	toks []token
	i    int
	vars *symbols
}

// exprError is a syntax error at a byte offset of the expression.
type exprError struct {
	pos int
	msg string
}

func (e *exprError) Error() string { return e.msg }

func parseExpr(src string, vars *symbols) (*node, error) {
	toks, err := lexExpr(src)
	if err != nil {
		return nil, err
	}
	p := &exprParser{src: src, toks: toks, vars: vars}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, &exprError{t.pos, fmt.Sprintf("syntax error: unexpected %q", t.text)}
	}
	return n, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func lexExpr(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			i++
			continue
		case c == '\\' && i+1 < len(s) && (s[i+1] == '\n' || s[i+1] == '\r'):
			i += 2 // continuation
			continue
		case c == ':' && i+1 < len(s) && isIdentStart(s[i+1]):
			j := i + 2
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tVar, text: s[i+1 : j], pos: i})
			i = j
			continue
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			isDouble := false
			if j < len(s) && s[j] == '.' {
				isDouble = true
				j++
				for j < len(s) && isDigit(s[j]) {
					j++
				}
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && isDigit(s[k]) {
					isDouble = true
					for k < len(s) && isDigit(s[k]) {
						k++
					}
					j = k
				}
			}
			text := s[i:j]
			t := token{text: text, pos: i}
			if isDouble {
				f, err := strconv.ParseFloat(text, 64)
				if err != nil {
					return nil, &exprError{i, fmt.Sprintf("invalid double constant %q", text)}
				}
				t.kind, t.fval = tDouble, f
			} else {
				v, err := strconv.ParseInt(text, 10, 64)
				if err != nil {
					if strings.TrimLeft(text, "0") == "9223372036854775808" {
						t.maxPlusOne = true
					} else {
						return nil, &exprError{i, "bigint constant overflow"}
					}
				}
				t.kind, t.ival = tInt, v
			}
			toks = append(toks, t)
			i = j
			continue
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tIdent, text: s[i:j], pos: i})
			i = j
			continue
		}
		for _, o := range []string{"<<", ">>", "<=", ">=", "<>", "!=", "+", "-", "*", "/", "%", "(", ")", ",", "=", "<", ">", "&", "|", "#", "~"} {
			if strings.HasPrefix(s[i:], o) {
				toks = append(toks, token{kind: tOp, text: o, pos: i})
				i += len(o)
				goto next
			}
		}
		return nil, &exprError{i, fmt.Sprintf("unexpected character %q", c)}
	next:
	}
	return append(toks, token{kind: tEOF, pos: len(s), text: "end of expression"}), nil
}

func (p *exprParser) peek() token { return p.toks[p.i] }

func (p *exprParser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// keyword reports whether the next token is the keyword kw (any case).
func (p *exprParser) keyword(kw string) bool {
	t := p.peek()
	return t.kind == tIdent && strings.EqualFold(t.text, kw)
}

func (p *exprParser) isOp(o string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == o
}

// fn makes an operation node, folded into a constant when its arguments
// are constants and it is pure (not random, not debug): "-5000" is then
// no subtraction at run time.
func fn(o op, args ...*node) *node {
	n := &node{op: o, args: args}
	switch o {
	case opRandom, opRandExp, opRandGauss, opRandZipf, opDebug, opCase, opAnd, opOr:
		return n
	}
	for _, a := range args {
		if a.op != opConst {
			return n
		}
	}
	var s state
	if v, err := s.eval(n); err == nil {
		return &node{op: opConst, val: v}
	}
	return n // the error shows at run time, as in pgbench
}

func (p *exprParser) or() (*node, error) {
	l, err := p.and()
	for err == nil && p.keyword("or") {
		p.next()
		var r *node
		if r, err = p.and(); err == nil {
			l = fn(opOr, l, r)
		}
	}
	return l, err
}

func (p *exprParser) and() (*node, error) {
	l, err := p.not()
	for err == nil && p.keyword("and") {
		p.next()
		var r *node
		if r, err = p.not(); err == nil {
			l = fn(opAnd, l, r)
		}
	}
	return l, err
}

func (p *exprParser) not() (*node, error) {
	if p.keyword("not") {
		p.next()
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		return fn(opNot, e), nil
	}
	return p.is()
}

func (p *exprParser) is() (*node, error) {
	l, err := p.cmp()
	if err != nil {
		return nil, err
	}
	null := &node{op: opConst, val: value{k: kNull}}
	switch {
	case p.keyword("isnull"):
		p.next()
		return fn(opIs, l, null), nil
	case p.keyword("notnull"):
		p.next()
		return fn(opNot, fn(opIs, l, null)), nil
	case p.keyword("is"):
		p.next()
		negate := false
		if p.keyword("not") {
			p.next()
			negate = true
		}
		t := p.next()
		var c value
		switch {
		case t.kind == tIdent && strings.EqualFold(t.text, "null"):
			c = value{k: kNull}
		case t.kind == tIdent && strings.EqualFold(t.text, "true"):
			c = boolVal(true)
		case t.kind == tIdent && strings.EqualFold(t.text, "false"):
			c = boolVal(false)
		default:
			return nil, &exprError{t.pos, "syntax error: IS must be followed by NULL, TRUE or FALSE"}
		}
		e := fn(opIs, l, &node{op: opConst, val: c})
		if negate {
			e = fn(opNot, e)
		}
		return e, nil
	}
	return l, nil
}

func (p *exprParser) cmp() (*node, error) {
	l, err := p.bits()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind != tOp {
		return l, nil
	}
	var mk func(a, b *node) *node
	switch t.text {
	case "=":
		mk = func(a, b *node) *node { return fn(opEq, a, b) }
	case "<>", "!=":
		mk = func(a, b *node) *node { return fn(opNe, a, b) }
	case "<":
		mk = func(a, b *node) *node { return fn(opLt, a, b) }
	case "<=":
		mk = func(a, b *node) *node { return fn(opLe, a, b) }
	case ">":
		mk = func(a, b *node) *node { return fn(opLt, b, a) }
	case ">=":
		mk = func(a, b *node) *node { return fn(opLe, b, a) }
	default:
		return l, nil
	}
	p.next()
	r, err := p.bits()
	if err != nil {
		return nil, err
	}
	if t2 := p.peek(); t2.kind == tOp && strings.ContainsAny(t2.text[:1], "=<>!") {
		return nil, &exprError{t2.pos, "syntax error: comparison operators do not associate"}
	}
	return mk(l, r), nil
}

func (p *exprParser) bits() (*node, error) {
	l, err := p.additive()
	for err == nil {
		t := p.peek()
		var o op
		switch {
		case t.kind == tOp && t.text == "&":
			o = opBitAnd
		case t.kind == tOp && t.text == "|":
			o = opBitOr
		case t.kind == tOp && t.text == "#":
			o = opBitXor
		case t.kind == tOp && t.text == "<<":
			o = opLsh
		case t.kind == tOp && t.text == ">>":
			o = opRsh
		default:
			return l, nil
		}
		p.next()
		var r *node
		if r, err = p.additive(); err == nil {
			l = fn(o, l, r)
		}
	}
	return l, err
}

func (p *exprParser) additive() (*node, error) {
	l, err := p.multiplicative()
	for err == nil && (p.isOp("+") || p.isOp("-")) {
		o := opAdd
		if p.next().text == "-" {
			o = opSub
		}
		var r *node
		if r, err = p.multiplicative(); err == nil {
			l = fn(o, l, r)
		}
	}
	return l, err
}

func (p *exprParser) multiplicative() (*node, error) {
	l, err := p.unary()
	for err == nil && (p.isOp("*") || p.isOp("/") || p.isOp("%")) {
		o := map[string]op{"*": opMul, "/": opDiv, "%": opMod}[p.next().text]
		var r *node
		if r, err = p.unary(); err == nil {
			l = fn(o, l, r)
		}
	}
	return l, err
}

func (p *exprParser) unary() (*node, error) {
	switch {
	case p.isOp("+"):
		p.next()
		return p.unary()
	case p.isOp("-"):
		p.next()
		if t := p.peek(); t.kind == tInt && t.maxPlusOne {
			p.next()
			return &node{op: opConst, val: intVal(math.MinInt64)}, nil
		}
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return fn(opSub, &node{op: opConst, val: intVal(0)}, e), nil
	case p.isOp("~"):
		p.next()
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return fn(opBitXor, &node{op: opConst, val: intVal(-1)}, e), nil
	}
	return p.primary()
}

func (p *exprParser) primary() (*node, error) {
	t := p.next()
	switch t.kind {
	case tInt:
		if t.maxPlusOne {
			return nil, &exprError{t.pos, "bigint constant overflow"}
		}
		return &node{op: opConst, val: intVal(t.ival)}, nil
	case tDouble:
		return &node{op: opConst, val: doubleVal(t.fval)}, nil
	case tVar:
		return &node{op: opVar, slot: p.vars.slot(t.text)}, nil
	case tOp:
		if t.text == "(" {
			e, err := p.or()
			if err != nil {
				return nil, err
			}
			if c := p.next(); c.kind != tOp || c.text != ")" {
				return nil, &exprError{c.pos, "syntax error: missing )"}
			}
			return e, nil
		}
	case tIdent:
		switch strings.ToLower(t.text) {
		case "null":
			return &node{op: opConst, val: value{k: kNull}}, nil
		case "true":
			return &node{op: opConst, val: boolVal(true)}, nil
		case "false":
			return &node{op: opConst, val: boolVal(false)}, nil
		case "case":
			return p.caseExpr()
		}
		return p.call(t)
	}
	return nil, &exprError{t.pos, fmt.Sprintf("syntax error: unexpected %s", t.text)}
}

func (p *exprParser) caseExpr() (*node, error) {
	c := &node{op: opCase}
	for p.keyword("when") {
		p.next()
		cond, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.keyword("then") {
			return nil, &exprError{p.peek().pos, "syntax error: expected THEN"}
		}
		p.next()
		then, err := p.or()
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, cond, then)
	}
	if len(c.args) == 0 {
		return nil, &exprError{p.peek().pos, "syntax error: expected WHEN"}
	}
	els := &node{op: opConst, val: value{k: kNull}}
	if p.keyword("else") {
		p.next()
		var err error
		if els, err = p.or(); err != nil {
			return nil, err
		}
	}
	if !p.keyword("end") {
		return nil, &exprError{p.peek().pos, "syntax error: expected END"}
	}
	p.next()
	c.args = append(c.args, els)
	return c, nil
}

func (p *exprParser) call(name token) (*node, error) {
	f, ok := functions.Get()[strings.ToLower(name.text)]
	if !ok {
		return nil, &exprError{name.pos, fmt.Sprintf("unexpected function name %q", name.text)}
	}
	if c := p.next(); c.kind != tOp || c.text != "(" {
		return nil, &exprError{c.pos, fmt.Sprintf("syntax error: expected ( after %s", name.text)}
	}
	n := &node{op: f.op}
	if !p.isOp(")") {
		for {
			a, err := p.or()
			if err != nil {
				return nil, err
			}
			n.args = append(n.args, a)
			if !p.isOp(",") {
				break
			}
			p.next()
		}
	}
	if c := p.next(); c.kind != tOp || c.text != ")" {
		return nil, &exprError{c.pos, "syntax error: expected , or )"}
	}
	if len(n.args) < f.min || f.max >= 0 && len(n.args) > f.max {
		return nil, &exprError{name.pos, fmt.Sprintf("unexpected number of arguments (%s)", strings.ToLower(name.text))}
	}
	switch f.op {
	case opHashFNV, opHashMurmur, opPermute:
		if len(n.args) < f.max {
			n.args = append(n.args, &node{op: opVar, slot: p.vars.slot("default_seed")})
		}
	}
	return n, nil
}
