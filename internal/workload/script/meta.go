package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxSleep bounds \sleep: pgbench keeps the time in a C int of
// microseconds, so it sleeps at most 2147483647 us (about 35 min 47 s) and
// wraps a longer one; pgarena refuses it.
const maxSleep = math.MaxInt32 * time.Microsecond

// sleepTime is n units of \sleep, refused beyond maxSleep.
func sleepTime(n int64, unit time.Duration) (time.Duration, error) {
	if n > int64(maxSleep/unit) {
		return 0, fmt.Errorf("sleep time %d %s is too long: at most %d us (%v)", n, unitName(unit), int64(maxSleep/time.Microsecond), maxSleep)
	}
	return time.Duration(n) * unit, nil
}

func unitName(u time.Duration) string {
	switch u {
	case time.Microsecond:
		return "us"
	case time.Millisecond:
		return "ms"
	}
	return "s"
}

// splitSleep splits a \sleep argument as pgbench: an optional sign and the
// digits (num, with its sign), then what follows them (a unit, or junk).
func splitSleep(f string) (num, rest string) {
	i := 0
	if i < len(f) && (f[i] == '+' || f[i] == '-') {
		i++
	}
	j := i
	for j < len(f) && f[j] >= '0' && f[j] <= '9' {
		j++
	}
	if j == i {
		return "", f
	}
	return f[:j], f[j:]
}

// validName is pgbench's valid_variable_name: a letter, underscore or
// non-ASCII byte, then those or digits.
func validName(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// meta parses the meta-command at text[at] ('\') up to the end of its
// line and returns the offset after it.
func (s *Script) meta(sc *scanner, at int, syms *symbols) (int, error) {
	text := sc.src
	j := at + 1
	for j < len(text) && (text[j] >= 'a' && text[j] <= 'z' || text[j] >= 'A' && text[j] <= 'Z') {
		j++
	}
	word := strings.ToLower(text[at+1 : j])
	// the arguments: to the end of the line, a backslash before the
	// newline continues it (replaced by spaces, offsets kept)
	argStart := j
	var b strings.Builder
	k := j
	for k < len(text) && text[k] != '\n' {
		if text[k] == '\\' && k+1 < len(text) && text[k+1] == '\n' {
			b.WriteString("  ")
			k += 2
			continue
		}
		if text[k] == '\\' && k+2 < len(text) && text[k+1] == '\r' && text[k+2] == '\n' {
			b.WriteString("   ")
			k += 3
			continue
		}
		b.WriteByte(text[k])
		k++
	}
	args := b.String()
	end := k
	line, _ := sc.pos(at)
	c := command{line: line, text: firstLine("\\" + word + args), slot: -1, sleepSlot: -1}
	fields := strings.Fields(args)
	// fieldOff gives the offset in text of the n-th field
	fieldOff := func(n int) int {
		off := 0
		for i := 0; i <= n && i < len(fields); i++ {
			idx := strings.Index(args[off:], fields[i])
			off += idx
			if i < n {
				off += len(fields[i])
			}
		}
		return argStart + off
	}
	noArgs := func() error {
		if len(fields) > 0 {
			return sc.errAt(fieldOff(0), "unexpected argument to \\%s", word)
		}
		return nil
	}
	expr := func(src string, off int) (*node, error) {
		if strings.TrimSpace(src) == "" {
			return nil, sc.errAt(off, "missing expression in \\%s", word)
		}
		n, err := parseExpr(src, syms)
		if err != nil {
			e := err.(*exprError)
			return nil, sc.errAt(off+e.pos, "%s in \\%s", e.msg, word)
		}
		return n, nil
	}
	var err error
	switch word {
	case "set":
		if len(fields) < 1 {
			return 0, sc.errAt(at, "missing argument in \\set")
		}
		if !validName(fields[0]) {
			return 0, sc.errAt(fieldOff(0), "invalid variable name %q in \\set", fields[0])
		}
		c.kind, c.slot = cSet, syms.slot(fields[0])
		rest := fieldOff(0) + len(fields[0]) - argStart
		if c.expr, err = expr(args[rest:], argStart+rest); err != nil {
			return 0, err
		}
	case "if", "elif":
		c.kind = cIf
		if word == "elif" {
			c.kind = cElif
		}
		if c.expr, err = expr(args, argStart); err != nil {
			return 0, err
		}
	case "else", "endif", "startpipeline", "syncpipeline", "endpipeline":
		if err := noArgs(); err != nil {
			return 0, err
		}
		c.kind = map[string]cmdKind{"else": cElse, "endif": cEndif, "startpipeline": cStartPipeline,
			"syncpipeline": cSyncPipeline, "endpipeline": cEndPipeline}[word]
	case "sleep":
		c.kind, c.unit = cSleep, time.Second
		if len(fields) < 1 {
			return 0, sc.errAt(at, "missing argument in \\sleep")
		}
		if len(fields) > 2 {
			return 0, sc.errAt(fieldOff(2), "too many arguments in \\sleep")
		}
		unit := ""
		if len(fields) == 2 {
			unit = fields[1]
		}
		if strings.HasPrefix(fields[0], ":") {
			if !validName(fields[0][1:]) {
				return 0, sc.errAt(fieldOff(0), "invalid variable name %q in \\sleep", fields[0])
			}
			c.sleepSlot = syms.slot(fields[0][1:])
		} else {
			// pgbench: an optional sign, digits, and the unit may follow
			// them in the same word ("2ms")
			num, glued := splitSleep(fields[0])
			if num == "" || glued != "" && unit != "" {
				return 0, sc.errAt(fieldOff(0), "invalid sleep time %q: must be an integer or a :variable", fields[0])
			}
			if glued != "" {
				unit = glued
			}
			n, perr := strconv.ParseInt(num, 10, 64)
			if perr != nil {
				n = math.MaxInt64 // too long, refused below
			}
			c.sleepConst = max(n, 0) // pgbench does not sleep a negative time
		}
		switch strings.ToLower(unit) {
		case "us":
			c.unit = time.Microsecond
		case "ms":
			c.unit = time.Millisecond
		case "s", "":
		default:
			return 0, sc.errAt(fieldOff(len(fields)-1), "unrecognized time unit %q, must be us, ms or s", unit)
		}
		if _, err := sleepTime(c.sleepConst, c.unit); err != nil {
			return 0, sc.errAt(fieldOff(0), "%v", err)
		}
	case "setshell", "shell":
		c.kind = cShell
		rest := fields
		if word == "setshell" {
			c.kind = cSetShell
			if len(fields) < 2 {
				return 0, sc.errAt(at, "missing command in \\setshell")
			}
			if !validName(fields[0]) {
				return 0, sc.errAt(fieldOff(0), "invalid variable name %q in \\setshell", fields[0])
			}
			c.slot = syms.slot(fields[0])
			rest = fields[1:]
		}
		if len(rest) == 0 {
			return 0, sc.errAt(at, "missing command in \\shell")
		}
		for _, f := range rest {
			switch {
			case strings.HasPrefix(f, "::"):
				c.shell = append(c.shell, shellArg{lit: f[1:], slot: -1})
			case strings.HasPrefix(f, ":"):
				c.shell = append(c.shell, shellArg{slot: syms.slot(f[1:])})
			default:
				c.shell = append(c.shell, shellArg{lit: f, slot: -1})
			}
		}
	case "gset", "aset":
		if len(fields) > 1 {
			return 0, sc.errAt(fieldOff(1), "too many arguments in \\%s", word)
		}
		n := len(s.cmds)
		if n == 0 || s.cmds[n-1].kind != cSQL || s.cmds[n-1].assign != assignNone {
			return 0, sc.errAt(at, "\\%s must follow an SQL command", word)
		}
		last := &s.cmds[n-1]
		last.assign = assignGset
		if word == "aset" {
			last.assign = assignAset
		}
		if len(fields) == 1 {
			last.prefix = fields[0]
		}
		return end, nil
	default:
		return 0, sc.errAt(at, "invalid command \\%s", word)
	}
	s.cmds = append(s.cmds, c)
	return end, nil
}

// link checks the nesting of \if and pipelines and sets the jumps.
func (s *Script) link(sc *scanner) error {
	type open struct {
		at       int // index of \if
		last     int // last branch (\if or \elif) whose next is unset
		hasElse  bool
		branches []int
	}
	var stack []*open
	pipeline := -1
	errAt := func(c command, format string, args ...any) error {
		return &SyntaxError{File: sc.file, Line: c.line, Col: 1, Msg: sprintf(format, args...)}
	}
	for i := range s.cmds {
		c := &s.cmds[i]
		switch c.kind {
		case cIf:
			stack = append(stack, &open{at: i, last: i})
		case cElif, cElse:
			if len(stack) == 0 {
				return errAt(*c, "%s without matching \\if", map[cmdKind]string{cElif: "\\elif", cElse: "\\else"}[c.kind])
			}
			o := stack[len(stack)-1]
			if o.hasElse {
				return errAt(*c, "%s after \\else", map[cmdKind]string{cElif: "\\elif", cElse: "\\else"}[c.kind])
			}
			s.cmds[o.last].next = i
			o.branches = append(o.branches, i)
			if c.kind == cElif {
				o.last = i
			} else {
				o.hasElse, o.last = true, -1
			}
		case cEndif:
			if len(stack) == 0 {
				return errAt(*c, "\\endif without matching \\if")
			}
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if o.last >= 0 {
				s.cmds[o.last].next = i
			}
			for _, b := range o.branches {
				s.cmds[b].end = i
			}
		case cStartPipeline:
			if pipeline >= 0 {
				return errAt(*c, "\\startpipeline: already in a pipeline")
			}
			pipeline = i
		case cSyncPipeline, cEndPipeline:
			if pipeline < 0 {
				return errAt(*c, "%s without \\startpipeline", c.text)
			}
			if c.kind == cEndPipeline {
				pipeline = -1
			}
		case cSQL:
			if pipeline >= 0 && c.assign != assignNone {
				// pgbench aborts the client when it reaches one
				return errAt(*c, "%s is not allowed in a pipeline", map[int]string{assignGset: "\\gset", assignAset: "\\aset"}[c.assign])
			}
		case cSleep, cShell, cSetShell:
			if pipeline >= 0 {
				return errAt(*c, "%s is not allowed in a pipeline", strings.Fields(c.text)[0])
			}
		}
	}
	if len(stack) > 0 {
		return errAt(s.cmds[stack[len(stack)-1].at], "\\if without matching \\endif")
	}
	if pipeline >= 0 {
		return errAt(s.cmds[pipeline], "\\startpipeline without \\endpipeline")
	}
	return nil
}

var sprintf = fmt.Sprintf
