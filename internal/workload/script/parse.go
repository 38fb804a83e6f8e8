package script

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// SyntaxError is a script that does not parse: where and why. Its text is
// "FILE:LINE:COLUMN: message" (columns count bytes from 1).
type SyntaxError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// cmdKind is what a command of a script does.
type cmdKind uint8

const (
	cSQL cmdKind = iota
	cSet
	cSleep
	cSetShell
	cShell
	cIf
	cElif
	cElse
	cEndif
	cStartPipeline
	cSyncPipeline
	cEndPipeline
)

// Result assignment after an SQL command.
const (
	assignNone = iota
	assignGset
	assignAset
)

// command is one compiled command of a script.
type command struct {
	kind cmdKind
	line int
	text string // as the -r report shows it

	// SQL
	pieces []string // simple protocol: text around variable references
	refs   []int    // slot of each reference; also the $n parameters in order
	ext    string   // extended and prepared: text with $1..$n
	name   string   // prepared statement name
	assign int      // assignNone, assignGset, assignAset
	prefix string   // \gset/\aset variable prefix

	// \set, \setshell: the variable set
	slot int
	expr *node // \set, \if, \elif

	// \sleep: a constant or a variable, times unit
	sleepSlot  int // -1: sleepConst
	sleepConst int64
	unit       time.Duration

	// \shell, \setshell
	shell []shellArg

	// \if, \elif: the next branch of the same \if when the condition is
	// false; \elif, \else: the \endif (reached after a branch ran)
	next, end int
}

// shellArg is a word of a shell command: literal text, or a variable.
type shellArg struct {
	lit  string
	slot int // -1: lit
}

// symbols numbers the variables of a program: every script of a run shares
// one table, so a client keeps its variables across scripts as pgbench.
type symbols struct {
	names []string
	idx   map[string]int
}

func (s *symbols) slot(name string) int {
	if i, ok := s.idx[name]; ok {
		return i
	}
	if s.idx == nil {
		s.idx = map[string]int{}
	}
	s.names = append(s.names, name)
	s.idx[name] = len(s.names) - 1
	return len(s.names) - 1
}

// Script is one parsed script file (or builtin) with its weight.
type Script struct {
	Name   string
	Weight int
	index  int
	cmds   []command
}

// Commands lists the script's commands as the -r report names them.
func (s *Script) Commands() []string {
	out := make([]string, len(s.cmds))
	for i, c := range s.cmds {
		out[i] = c.text
	}
	return out
}

// scanner walks a script's text keeping line and column.
type scanner struct {
	file  string
	src   string
	lines []int // offset of each line's start
}

func (s *scanner) pos(off int) (line, col int) {
	l := 0
	for l+1 < len(s.lines) && s.lines[l+1] <= off {
		l++
	}
	return l + 1, off - s.lines[l] + 1
}

func (s *scanner) errAt(off int, format string, args ...any) *SyntaxError {
	l, c := s.pos(off)
	return &SyntaxError{File: s.file, Line: l, Col: c, Msg: fmt.Sprintf(format, args...)}
}

// parseScript splits text into commands (SQL ended by ';' outside quotes,
// comments and dollar quotes; backslash meta-commands ended by the end of
// the line, continued by a backslash before it) and compiles them.
func parseScript(file, text string, syms *symbols, index int) (*Script, error) {
	sc := &scanner{file: file, src: text, lines: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			sc.lines = append(sc.lines, i+1)
		}
	}
	s := &Script{Name: file, index: index}
	var sql strings.Builder
	sqlStart := -1
	flush := func() error {
		q := strings.TrimSpace(sql.String())
		sql.Reset()
		start := sqlStart
		sqlStart = -1
		if q == "" || q == ";" {
			return nil
		}
		c, err := compileSQL(sc, start, q, syms, index, len(s.cmds))
		if err != nil {
			return err
		}
		s.cmds = append(s.cmds, c)
		return nil
	}
	i := 0
	for i < len(text) {
		ch := text[i]
		switch {
		case ch == '-' && strings.HasPrefix(text[i:], "--"):
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		case ch == '/' && strings.HasPrefix(text[i:], "/*"):
			j, depth := i+2, 1
			for j < len(text) && depth > 0 {
				switch {
				case strings.HasPrefix(text[j:], "/*"):
					depth++
					j += 2
				case strings.HasPrefix(text[j:], "*/"):
					depth--
					j += 2
				default:
					j++
				}
			}
			if depth > 0 {
				return nil, sc.errAt(i, "unterminated /* comment")
			}
			if sqlStart >= 0 {
				sql.WriteString(text[i:j])
			}
			i = j
			continue
		case ch == '\'' || ch == '"':
			j := i + 1
			for {
				k := strings.IndexByte(text[j:], ch)
				if k < 0 {
					return nil, sc.errAt(i, "unterminated quoted string")
				}
				j += k + 1
				if j < len(text) && text[j] == ch { // doubled quote
					j++
					continue
				}
				break
			}
			if sqlStart < 0 {
				sqlStart = i
			}
			sql.WriteString(text[i:j])
			i = j
			continue
		case ch == '$':
			if tag, ok := dollarTag(text[i:]); ok {
				k := strings.Index(text[i+len(tag):], tag)
				if k < 0 {
					return nil, sc.errAt(i, "unterminated dollar-quoted string")
				}
				j := i + len(tag) + k + len(tag)
				if sqlStart < 0 {
					sqlStart = i
				}
				sql.WriteString(text[i:j])
				i = j
				continue
			}
		case ch == ';':
			sql.WriteByte(';')
			if err := flush(); err != nil {
				return nil, err
			}
			i++
			continue
		case ch == '\\' && strings.HasPrefix(text[i:], "\\;"):
			sql.WriteByte(';') // compound statement: one command
			i += 2
			continue
		case ch == '\\':
			if err := flush(); err != nil {
				return nil, err
			}
			end, err := s.meta(sc, i, syms)
			if err != nil {
				return nil, err
			}
			i = end
			continue
		}
		if sqlStart < 0 && !isSpace(ch) {
			sqlStart = i
		}
		if sqlStart >= 0 {
			sql.WriteByte(ch)
		}
		i++
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if err := s.link(sc); err != nil {
		return nil, err
	}
	return s, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// dollarTag returns the opening $tag$ of a dollar-quoted string at s.
func dollarTag(s string) (string, bool) {
	j := 1
	for j < len(s) && s[j] != '$' {
		if !isIdentChar(s[j]) || j == 1 && isDigit(s[j]) {
			return "", false
		}
		j++
	}
	if j >= len(s) {
		return "", false
	}
	return s[:j+1], true
}

// compileSQL compiles one SQL command: the pieces around :variables for
// the simple protocol, and the $n text for the others. As pgbench's
// parseQuery, every :name occurrence is its own parameter, and runs of
// colons (casts) are skipped.
func compileSQL(sc *scanner, start int, q string, syms *symbols, script, index int) (command, error) {
	line, _ := sc.pos(start)
	c := command{kind: cSQL, line: line, text: firstLine(q)}
	var piece, ext strings.Builder
	i := 0
	for i < len(q) {
		if q[i] != ':' {
			piece.WriteByte(q[i])
			ext.WriteByte(q[i])
			i++
			continue
		}
		if i+1 < len(q) && isIdentStart(q[i+1]) {
			j := i + 2
			for j < len(q) && isIdentChar(q[j]) {
				j++
			}
			c.pieces = append(c.pieces, piece.String())
			piece.Reset()
			c.refs = append(c.refs, syms.slot(q[i+1:j]))
			ext.WriteString("$" + strconv.Itoa(len(c.refs)))
			i = j
			continue
		}
		for i < len(q) && q[i] == ':' {
			piece.WriteByte(':')
			ext.WriteByte(':')
			i++
		}
		// after a run of colons, a name is not a variable (a cast)
		for i < len(q) && isIdentChar(q[i]) {
			piece.WriteByte(q[i])
			ext.WriteByte(q[i])
			i++
		}
	}
	c.pieces = append(c.pieces, piece.String())
	c.ext = ext.String()
	// named by its text: two programs on one connection (pgbench, a
	// pooler) never meet a same-named statement of another text
	h := fnv.New64a()
	h.Write([]byte(c.ext))
	c.name = fmt.Sprintf("pgarena_%016x", h.Sum64())
	if usesCopyProtocol(q) {
		// pgbench: "COPY is not supported in pgbench, aborting"; the
		// copy sub-protocol would wait for data no script sends
		return c, sc.errAt(start, "COPY FROM STDIN and COPY TO STDOUT are not supported in scripts (as in pgbench)")
	}
	if len(c.refs) > 255 {
		return c, sc.errAt(start, "statement has too many arguments (maximum is 255)")
	}
	return c, nil
}

func firstLine(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 120 {
		q = q[:117] + "..."
	}
	return q
}

// usesCopyProtocol reports whether one of the statements of q (several
// when compound, "\\;") is a COPY FROM STDIN or TO STDOUT, which answers
// with the copy sub-protocol. Quoted text, dollar quotes and comments are
// skipped; a COPY to or from a server file is an ordinary command.
func usesCopyProtocol(q string) bool {
	first, copyStmt := "", false
	word := func(w string) bool {
		w = strings.ToLower(w)
		if first == "" {
			first = w
			copyStmt = w == "copy"
		}
		return copyStmt && (w == "stdin" || w == "stdout")
	}
	for i := 0; i < len(q); {
		ch := q[i]
		switch {
		case ch == ';':
			first, copyStmt = "", false
			i++
		case ch == '-' && strings.HasPrefix(q[i:], "--"):
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case ch == '/' && strings.HasPrefix(q[i:], "/*"):
			k := strings.Index(q[i+2:], "*/")
			if k < 0 {
				return false
			}
			i += k + 4
		case ch == '\'' || ch == '"':
			k := strings.IndexByte(q[i+1:], ch)
			if k < 0 {
				return false
			}
			i += k + 2
		case ch == '$':
			tag, ok := dollarTag(q[i:])
			if !ok {
				i++
				continue
			}
			k := strings.Index(q[i+len(tag):], tag)
			if k < 0 {
				return false
			}
			i += len(tag) + k + len(tag)
		case isIdentStart(ch):
			j := i + 1
			for j < len(q) && isIdentChar(q[j]) {
				j++
			}
			if word(q[i:j]) {
				return true
			}
			i = j
		default:
			i++
		}
	}
	return false
}
