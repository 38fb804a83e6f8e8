// Package script is pgbench's script language (PostgreSQL 17's pgbench
// documentation, "Custom Scripts"): SQL commands with :variables, and the
// meta-commands \set (with pgbench's full expression grammar and
// functions), \sleep, \setshell, \shell, \if/\elif/\else/\endif,
// \gset/\aset and \startpipeline/\syncpipeline/\endpipeline. Scripts are
// compiled once (variables to slots, SQL to pieces and $n texts) and run
// by a Runner per client over pgbench's three protocols: -M simple writes
// variables into the text, extended and prepared send them as text
// parameters.
//
// Random functions draw from pgbench's generator (PostgreSQL's pg_prng,
// xoroshiro128**) seeded from --random-seed as pgbench seeds its clients,
// so a script run with the same seed and client count draws the same
// values as under pgbench.
//
// It also registers the workload "script": `run script -f FILE[@W] ...` on
// any database, with no tables of its own. tpcb runs its builtin scripts
// and -f files with the same engine.
package script

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Program is the scripts of a run, sharing one variable table.
type Program struct {
	scripts  []*Script
	syms     symbols
	defaults []preset
	total    int64 // sum of weights
	seeds    seedDraws
	// errPrefix (PrefixErrors) begins the text of every failed run's error
	errPrefix string
}

// PrefixErrors makes the errors of the program's runs say "name: ..."
// (the workload that runs it, as tpcb's builtins do).
func (p *Program) PrefixErrors(name string) { p.errPrefix = name }

// preset is a variable a client starts with (-D, :scale).
type preset struct {
	slot int
	text []byte // nil: val
	val  value
}

// Add parses a script and adds it with weight w. A syntax error is a
// *SyntaxError naming file:line:column.
func (p *Program) Add(name, text string, w int) (*Script, error) {
	s, err := parseScript(name, text, &p.syms, len(p.scripts))
	if err != nil {
		return nil, err
	}
	if len(s.cmds) == 0 {
		return nil, &SyntaxError{File: name, Line: 1, Col: 1, Msg: "empty script: no command"}
	}
	s.Weight = w
	p.scripts = append(p.scripts, s)
	p.total += int64(w)
	return s, nil
}

// Scripts lists the program's scripts in the order added.
func (p *Program) Scripts() []*Script { return p.scripts }

// Define sets a variable every client starts with, from text as -D
// NAME=VALUE does.
func (p *Program) Define(name, text string) error {
	if !validName(name) {
		return fmt.Errorf("-D %s: invalid variable name", name)
	}
	p.defaults = append(p.defaults, preset{slot: p.syms.slot(name), text: []byte(text)})
	return nil
}

// DefineInt sets an integer variable every client starts with unless -D
// gave it (:scale).
func (p *Program) DefineInt(name string, v int64) {
	slot := p.syms.slot(name)
	for _, d := range p.defaults {
		if d.slot == slot {
			return
		}
	}
	p.defaults = append(p.defaults, preset{slot: slot, val: intVal(v)})
}

// Validate checks the weights: pgbench refuses a total of zero.
func (p *Program) Validate() error {
	if len(p.scripts) == 0 {
		return errors.New("no script: give -f FILE")
	}
	if p.total <= 0 {
		return errors.New("total script weight must not be zero")
	}
	return nil
}

// Choose picks a script by weight from a uniform draw u in [0, total)
// (pgbench's chooseScript).
func (p *Program) Choose(u int64) int {
	if len(p.scripts) == 1 {
		return 0
	}
	i := 0
	for {
		u -= int64(p.scripts[i].Weight)
		if u < 0 {
			return i
		}
		i++
	}
}

// TotalWeight is the sum of the scripts' weights.
func (p *Program) TotalWeight() int64 { return p.total }

// SplitWeight splits pgbench's NAME@WEIGHT (weight 1 when absent).
func SplitWeight(arg string) (name string, w int, err error) {
	i := strings.LastIndexByte(arg, '@')
	if i < 0 {
		return arg, 1, nil
	}
	w, err = strconv.Atoi(arg[i+1:])
	if err != nil || w < 0 {
		return "", 0, fmt.Errorf("invalid weight specification: %s", arg)
	}
	return arg[:i], w, nil
}
