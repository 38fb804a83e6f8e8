package plan

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Plan is a decoded and checked plan file.
type Plan struct {
	Path      string
	Name      string // tags every run of the plan; default: the file's base name
	Repeats   int    // runs of every cell (default 1)
	Order     string // OrderWritten or OrderShuffled
	Seed      uint64 // of the shuffle
	Defaults  Settings
	Targets   []Target
	Workloads []Workload
	Axes      []Axis // in the order written: the first varies slowest
}

// Orders of the cells.
const (
	OrderWritten  = "as-written" // targets, then workloads, then axes, as written; repeats outermost
	OrderShuffled = "shuffled"   // the same cells in a random order (Seed): spreads drift over the matrix
)

// Init policies: when a cell's run loads its workload (run --init).
const (
	InitOnce    = "once"     // the first cell of each target, workload and workload parameters
	InitPerCell = "per-cell" // every cell
	InitNever   = "never"    // the data is there already (the default)
)

// Maintenance between cells (Settings.Between).
const (
	Checkpoint = "checkpoint"
	Vacuum     = "vacuum"
)

// Flag is one run flag of a plan: --Name=v for each of Values (several for
// a repeatable flag such as --pg-set), from line Line of the file.
type Flag struct {
	Name   string
	Values []string
	Line   int
}

// args renders f as command-line arguments.
func (f Flag) args() []string {
	var out []string
	for _, v := range f.Values {
		out = append(out, "--"+f.Name+"="+v)
	}
	return out
}

// Settings are what defaults, a target and a workload may each set; the
// more specific wins (defaults < target < workload < matrix for flags).
type Settings struct {
	Flags       []Flag
	Init        string         // InitOnce, InitPerCell, InitNever; "" unset
	Cooldown    *time.Duration // pause after each cell
	Between     []string       // maintenance before each cell: checkpoint, vacuum
	Ready       *time.Duration // wait this long for the target to accept connections (--wait-ready)
	Before      string         // shell command before each cell; its failure fails the cell
	After       string         // shell command after each cell
	HookTimeout *time.Duration // deadline of each hook (default 10m)
	between     bool           // Between was given (even empty)
}

// Target is one database of the plan: a DSN, a named cluster, or the
// embedded cluster (started for each cell) with server settings.
type Target struct {
	Name    string
	Line    int
	DSN     string // may hold ${VAR}, expanded when the cell runs
	Cluster string
	PgSet   []string // key=value for the embedded cluster
	Label   string
	Settings
}

// Embedded reports whether the target is the embedded cluster.
func (t *Target) Embedded() bool { return t.DSN == "" && t.Cluster == "" }

// Workload is one workload of the plan with its parameters (flags).
type Workload struct {
	Name     string // the entry's name (default: the workload)
	Workload string // registered workload
	Line     int
	Settings
}

// Axis is one dimension of the matrix: a run flag (or "target" or
// "workload") and its values.
type Axis struct {
	Name   string
	Line   int
	Values []AxisValue
}

// AxisValue is one value of an axis; a list value sets a repeatable flag
// several times.
type AxisValue struct {
	Text   string // as shown in cell names
	Values []string
	Line   int
}

// Special axes: they choose among the plan's targets and workloads by name.
const (
	AxisTarget   = "target"
	AxisWorkload = "workload"
)

// Error is a problem with a plan file, at a line of it.
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return e.Path + ": " + e.Msg
}

// Load reads and decodes the plan file at path. Unknown keys and bad values
// are an *Error naming the file, the line and the key.
func Load(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	return Parse(path, b)
}

// Parse decodes a plan file's contents (path names it in errors).
func Parse(path string, b []byte) (*Plan, error) {
	d := &decoder{path: path}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		return nil, d.yamlError(err)
	}
	p := &Plan{Path: path, Repeats: 1, Order: OrderWritten, Seed: 1}
	if len(doc.Content) == 0 {
		return nil, &Error{Path: path, Msg: "empty plan"}
	}
	if err := d.plan(doc.Content[0], p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return p, p.check()
}

// decoder walks the YAML nodes, refusing what it does not know.
type decoder struct{ path string }

func (d *decoder) errf(n *yaml.Node, format string, args ...any) error {
	return &Error{Path: d.path, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

// yamlError gives a syntax error of the YAML parser the file's name.
func (d *decoder) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, m, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(n); err == nil {
				return &Error{Path: d.path, Line: line, Msg: m}
			}
		}
	}
	return &Error{Path: d.path, Msg: msg}
}

// fields calls set for each key of the mapping n, refusing keys not in
// set with the key's line and the keys it knows.
func (d *decoder) fields(n *yaml.Node, what string, set map[string]func(v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return d.errf(n, "%s must be a mapping (key: value)", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := set[k.Value]
		if !ok {
			known := make([]string, 0, len(set))
			for name := range set {
				known = append(known, name)
			}
			slices.Sort(known)
			return d.errf(k, "unknown key %q in %s (known: %s)", k.Value, what, strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return d.errf(k, "key %q given twice in %s", k.Value, what)
		}
		seen[k.Value] = true
		if err := f(v); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) scalar(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.errf(n, "%s: expected a single value", key)
	}
	return n.Value, nil
}

func (d *decoder) str(dst *string, key string) func(*yaml.Node) error {
	return func(n *yaml.Node) (err error) { *dst, err = d.scalar(n, key); return err }
}

func (d *decoder) duration(dst **time.Duration, key string) func(*yaml.Node) error {
	return func(n *yaml.Node) error {
		s, err := d.scalar(n, key)
		if err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil || v < 0 {
			return d.errf(n, "%s: %q is not a duration (30s, 5m, 1h)", key, s)
		}
		*dst = &v
		return nil
	}
}

func (d *decoder) plan(n *yaml.Node, p *Plan) error {
	var seed, order string
	err := d.fields(n, "the plan", map[string]func(*yaml.Node) error{
		"name":      d.str(&p.Name, "name"),
		"repeats":   d.positive(&p.Repeats, "repeats"),
		"order":     d.str(&order, "order"),
		"seed":      d.str(&seed, "seed"),
		"defaults":  func(v *yaml.Node) error { return d.settings(v, "defaults", &p.Defaults, nil) },
		"targets":   func(v *yaml.Node) error { return d.targets(v, p) },
		"workloads": func(v *yaml.Node) error { return d.workloads(v, p) },
		"matrix":    func(v *yaml.Node) error { return d.matrix(v, p) },
	})
	if err != nil {
		return err
	}
	if order != "" {
		if order != OrderWritten && order != OrderShuffled {
			return d.errf(d.keyNode(n, "order"), "order: %q is not %s or %s", order, OrderWritten, OrderShuffled)
		}
		p.Order = order
	}
	if seed != "" {
		if p.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
			return d.errf(d.keyNode(n, "seed"), "seed: %q is not a non-negative integer", seed)
		}
	}
	return nil
}

// keyNode finds the key node named key in the mapping n (for its line).
func (d *decoder) keyNode(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return n
}

func (d *decoder) positive(dst *int, key string) func(*yaml.Node) error {
	return func(n *yaml.Node) error {
		s, err := d.scalar(n, key)
		if err != nil {
			return err
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return d.errf(n, "%s: %q is not a whole number of at least 1", key, s)
		}
		*dst = v
		return nil
	}
}

// settings decodes a Settings mapping; extra holds the owner's own keys.
func (d *decoder) settings(n *yaml.Node, what string, s *Settings, extra map[string]func(*yaml.Node) error) error {
	set := map[string]func(*yaml.Node) error{
		"flags": func(v *yaml.Node) error {
			fl, err := d.flags(v, what+" flags")
			s.Flags = append(s.Flags, fl...)
			return err
		},
		"init":         d.initPolicy(&s.Init),
		"warmup":       func(v *yaml.Node) error { return d.flagKey(v, "warmup", s) },
		"time":         func(v *yaml.Node) error { return d.flagKey(v, "time", s) },
		"cooldown":     d.duration(&s.Cooldown, "cooldown"),
		"ready":        d.duration(&s.Ready, "ready"),
		"hook-timeout": d.duration(&s.HookTimeout, "hook-timeout"),
		"before":       d.str(&s.Before, "before"),
		"after":        d.str(&s.After, "after"),
		"between":      func(v *yaml.Node) error { return d.between(v, s) },
	}
	for k, f := range extra {
		set[k] = f
	}
	return d.fields(n, what, set)
}

// flagKey is a settings key that is a run flag (warmup, time).
func (d *decoder) flagKey(n *yaml.Node, name string, s *Settings) error {
	v, err := d.scalar(n, name)
	if err != nil {
		return err
	}
	s.Flags = append(s.Flags, Flag{Name: name, Values: []string{v}, Line: n.Line})
	return nil
}

func (d *decoder) initPolicy(dst *string) func(*yaml.Node) error {
	return func(n *yaml.Node) error {
		v, err := d.scalar(n, "init")
		if err != nil {
			return err
		}
		switch v {
		case InitOnce, InitPerCell, InitNever:
			*dst = v
			return nil
		}
		return d.errf(n, "init: %q is not %s, %s or %s", v, InitOnce, InitPerCell, InitNever)
	}
}

func (d *decoder) between(n *yaml.Node, s *Settings) error {
	s.between = true
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	for _, it := range items {
		v, err := d.scalar(it, "between")
		if err != nil {
			return err
		}
		if v != Checkpoint && v != Vacuum {
			return d.errf(it, "between: %q is not %s or %s", v, Checkpoint, Vacuum)
		}
		s.Between = append(s.Between, v)
	}
	return nil
}

// flags decodes a mapping of run flags: name: value, name: [v1, v2] (a
// repeatable flag given twice) or name: {k: v} (--name=k=v, as --pg-set).
func (d *decoder) flags(n *yaml.Node, what string) ([]Flag, error) {
	if n.Kind != yaml.MappingNode {
		return nil, d.errf(n, "%s must be a mapping (flag: value)", what)
	}
	var out []Flag
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, err := d.flagName(k)
		if err != nil {
			return nil, err
		}
		vals, err := d.flagValues(v, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Flag{Name: name, Values: vals, Line: k.Line})
	}
	return out, nil
}

func (d *decoder) flagName(k *yaml.Node) (string, error) {
	name := strings.TrimLeft(k.Value, "-")
	if len(name) < 2 || strings.ContainsAny(name, " =") {
		return "", d.errf(k, "%q is not a run flag's long name (clients, rate, protocol, ...)", k.Value)
	}
	return name, nil
}

// flagValues is a flag's value(s): a scalar, a list or a mapping.
func (d *decoder) flagValues(v *yaml.Node, name string) ([]string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		return []string{v.Value}, nil
	case yaml.SequenceNode:
		var vals []string
		for _, it := range v.Content {
			s, err := d.scalar(it, name)
			if err != nil {
				return nil, err
			}
			vals = append(vals, s)
		}
		return vals, nil
	case yaml.MappingNode:
		var vals []string
		for i := 0; i+1 < len(v.Content); i += 2 {
			s, err := d.scalar(v.Content[i+1], name+"."+v.Content[i].Value)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v.Content[i].Value+"="+s)
		}
		return vals, nil
	}
	return nil, d.errf(v, "%s: expected a value, a list or a mapping", name)
}

func (d *decoder) targets(n *yaml.Node, p *Plan) error {
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, "targets must be a list")
	}
	for _, it := range n.Content {
		t := Target{Line: it.Line}
		var embedded string
		err := d.settings(it, "a target", &t.Settings, map[string]func(*yaml.Node) error{
			"name":     d.str(&t.Name, "name"),
			"dsn":      d.str(&t.DSN, "dsn"),
			"cluster":  d.str(&t.Cluster, "cluster"),
			"embedded": d.str(&embedded, "embedded"),
			"label":    d.str(&t.Label, "label"),
			"pg-set": func(v *yaml.Node) (err error) {
				if v.Kind != yaml.MappingNode {
					return d.errf(v, "pg-set must be a mapping (setting: value)")
				}
				t.PgSet, err = d.flagValues(v, "pg-set")
				return err
			},
		})
		if err != nil {
			return err
		}
		if err := d.checkTarget(it, &t, embedded); err != nil {
			return err
		}
		p.Targets = append(p.Targets, t)
	}
	return nil
}

func (d *decoder) checkTarget(n *yaml.Node, t *Target, embedded string) error {
	switch {
	case t.Name == "":
		return d.errf(n, "a target needs a name")
	case t.DSN != "" && t.Cluster != "":
		return d.errf(d.keyNode(n, "cluster"), "target %s: give either dsn or cluster, not both", t.Name)
	case embedded != "" && embedded != "true":
		return d.errf(d.keyNode(n, "embedded"), "target %s: embedded: true, or leave it out and give dsn or cluster", t.Name)
	case embedded == "true" && (t.DSN != "" || t.Cluster != ""):
		return d.errf(d.keyNode(n, "embedded"), "target %s: embedded: true with a dsn or cluster", t.Name)
	case len(t.PgSet) > 0 && !t.Embedded():
		return d.errf(d.keyNode(n, "pg-set"), "target %s: pg-set applies to the embedded cluster only (set an existing server's settings with a before hook)", t.Name)
	}
	return nil
}

func (d *decoder) workloads(n *yaml.Node, p *Plan) error {
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, "workloads must be a list")
	}
	for _, it := range n.Content {
		w := Workload{Line: it.Line}
		if it.Kind == yaml.ScalarNode { // - tpcb
			w.Name, w.Workload = it.Value, it.Value
			p.Workloads = append(p.Workloads, w)
			continue
		}
		err := d.settings(it, "a workload", &w.Settings, map[string]func(*yaml.Node) error{
			"name":     d.str(&w.Name, "name"),
			"workload": d.str(&w.Workload, "workload"),
		})
		if err != nil {
			return err
		}
		if w.Workload == "" {
			w.Workload = w.Name
		}
		if w.Name == "" {
			w.Name = w.Workload
		}
		if w.Name == "" {
			return d.errf(it, "a workload needs a name or workload")
		}
		p.Workloads = append(p.Workloads, w)
	}
	return nil
}

func (d *decoder) matrix(n *yaml.Node, p *Plan) error {
	if n.Kind != yaml.MappingNode {
		return d.errf(n, "matrix must be a mapping (axis: [values])")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, err := d.flagName(k)
		if err != nil {
			return err
		}
		a := Axis{Name: name, Line: k.Line}
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			items = v.Content
		}
		for _, it := range items {
			vals, err := d.flagValues(it, name)
			if err != nil {
				return err
			}
			a.Values = append(a.Values, AxisValue{Text: strings.Join(vals, ","), Values: vals, Line: it.Line})
		}
		if len(a.Values) == 0 {
			return d.errf(k, "matrix axis %s has no values", name)
		}
		p.Axes = append(p.Axes, a)
	}
	return nil
}

// check finds what the decoder cannot see key by key: duplicates, axes
// naming what is not there, a plan without targets or workloads.
func (p *Plan) check() error {
	errf := func(line int, format string, args ...any) error {
		return &Error{Path: p.Path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if len(p.Workloads) == 0 {
		return errf(0, "the plan has no workloads")
	}
	if len(p.Targets) == 0 { // the embedded cluster
		p.Targets = []Target{{Name: "embedded"}}
	}
	names := map[string]bool{}
	for _, t := range p.Targets {
		if names["t:"+t.Name] {
			return errf(t.Line, "target %s is named twice", t.Name)
		}
		names["t:"+t.Name] = true
	}
	for _, w := range p.Workloads {
		if names["w:"+w.Name] {
			return errf(w.Line, "workload %s is named twice (give each a name)", w.Name)
		}
		names["w:"+w.Name] = true
	}
	axes := map[string]bool{}
	for _, a := range p.Axes {
		if axes[a.Name] {
			return errf(a.Line, "matrix axis %s is given twice", a.Name)
		}
		axes[a.Name] = true
		prefix := map[string]string{AxisTarget: "t:", AxisWorkload: "w:"}[a.Name]
		for _, v := range a.Values {
			if prefix != "" && !names[prefix+v.Text] {
				return errf(v.Line, "matrix %s: no %s named %q in the plan", a.Name, a.Name, v.Text)
			}
		}
	}
	if n := p.countCells(); n > MaxCells {
		return errf(0, "the plan has %s cells (%d repeats of %d), more than the %d a plan may have: lower repeats or the matrix",
			humanCount(n), p.Repeats, p.countCells()/uint64(p.Repeats), MaxCells)
	}
	return nil
}

// MaxCells bounds a plan's cells, repeats included: each is a run, and
// Cells holds them all in memory.
const MaxCells = 100_000

// countCells is how many cells Cells would make, without making them;
// past MaxCells it saturates (no overflow).
func (p *Plan) countCells() uint64 {
	const limit = 1 << 62
	mul := func(a, b uint64) uint64 {
		if b != 0 && a > limit/b {
			return limit
		}
		return a * b
	}
	var base uint64
	for ti := range p.Targets {
		for wi := range p.Workloads {
			n := uint64(1)
			for _, a := range p.Axes {
				k := uint64(0)
				for _, v := range a.Values {
					if (a.Name != AxisTarget || v.Text == p.Targets[ti].Name) && (a.Name != AxisWorkload || v.Text == p.Workloads[wi].Name) {
						k++
					}
				}
				n = mul(n, k)
			}
			base = min(base+n, limit)
		}
	}
	return mul(base, uint64(p.Repeats))
}

// humanCount writes n with thousands separators.
func humanCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
