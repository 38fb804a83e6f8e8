package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultHookTimeout is the deadline of a hook without hook-timeout.
const DefaultHookTimeout = 10 * time.Minute

// Cell is one benchmark of the plan, once per repeat: a workload with run
// flags on a target.
type Cell struct {
	ID       string // stable: a hash of the target, the workload and the flags
	Name     string // target/workload/axis=value..., for people
	Index    int    // 1-based position in the plan's order (repeats included)
	Repeat   int    // 1-based
	Target   *Target
	Workload *Workload
	Axes     []Setting // the matrix values of this cell, in axis order
	Flags    []Flag    // merged run flags, without the target's and --init
	Settings Settings  // merged policies (Flags unused)
	Line     int       // the most specific line: the last axis value, else the workload
}

// Setting is one axis value of a cell.
type Setting struct{ Axis, Value string }

// Key identifies a cell's repeat: id/repeat.
func (c *Cell) Key() string { return c.ID + "/" + strconv.Itoa(c.Repeat) }

// Args are the run command's arguments of the cell: the workload, then the
// target's flags and the cell's flags; init adds --init. ${VAR} in a DSN is
// left for the caller to expand.
func (c *Cell) Args(init bool) []string {
	args := []string{c.Workload.Workload}
	args = append(args, c.TargetArgs()...)
	for _, f := range c.Flags {
		args = append(args, f.args()...)
	}
	if init && !c.Target.Embedded() {
		args = append(args, "--init")
	}
	return args
}

// TargetArgs are the run flags that name the cell's target.
func (c *Cell) TargetArgs() []string {
	t := c.Target
	var args []string
	switch {
	case t.DSN != "":
		args = append(args, "--dsn="+t.DSN)
	case t.Cluster != "":
		args = append(args, "--cluster="+t.Cluster)
	}
	for _, kv := range t.PgSet {
		args = append(args, "--pg-set="+kv)
	}
	if t.Label != "" {
		args = append(args, "--label="+t.Label)
	}
	if r := c.Settings.Ready; r != nil && !t.Embedded() {
		args = append(args, "--wait-ready="+r.String())
	}
	return args
}

// InitKey says which cells share loaded data: the target, the workload
// and the workload's own flags (params: their names, from the caller's
// check of the flags).
func (c *Cell) InitKey(params map[string]bool) string {
	parts := []string{c.Target.Name, c.Workload.Workload}
	for _, f := range c.Flags {
		if params[f.Name] {
			parts = append(parts, f.Name+"="+strings.Join(f.Values, ","))
		}
	}
	slices.Sort(parts[2:])
	return strings.Join(parts, "\x00")
}

// Cells expands the plan into its cells, in run order, repeats included.
func (p *Plan) Cells() []Cell {
	var base []Cell
	for ti := range p.Targets {
		for wi := range p.Workloads {
			base = append(base, p.axisCells(&p.Targets[ti], &p.Workloads[wi])...)
		}
	}
	var out []Cell
	for r := 1; r <= p.Repeats; r++ {
		for _, c := range base {
			c.Repeat = r
			out = append(out, c)
		}
	}
	if p.Order == OrderShuffled {
		rng := rand.New(rand.NewPCG(p.Seed, 0x706c616e)) // "plan"
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	for i := range out {
		out[i].Index = i + 1
	}
	return out
}

// axisCells crosses one target and one workload with the matrix axes.
func (p *Plan) axisCells(t *Target, w *Workload) []Cell {
	cells := []Cell{{Target: t, Workload: w, Line: w.Line}}
	for _, a := range p.Axes {
		var next []Cell
		for _, c := range cells {
			for _, v := range a.Values {
				switch {
				case a.Name == AxisTarget && v.Text != t.Name, a.Name == AxisWorkload && v.Text != w.Name:
					continue
				}
				n := c
				n.Axes = append(slices.Clip(c.Axes), Setting{Axis: a.Name, Value: v.Text})
				n.Line = v.Line
				next = append(next, n)
			}
		}
		cells = next
	}
	for i := range cells {
		p.finish(&cells[i])
	}
	return cells
}

// finish merges the cell's flags and settings and names it.
func (p *Plan) finish(c *Cell) {
	levels := []*Settings{&p.Defaults, &c.Target.Settings, &c.Workload.Settings}
	var flags []Flag
	set := func(f Flag) {
		if i := slices.IndexFunc(flags, func(g Flag) bool { return g.Name == f.Name }); i >= 0 {
			flags[i] = f // the more specific level replaces the value
			return
		}
		flags = append(flags, f)
	}
	for _, s := range levels {
		for _, f := range s.Flags {
			set(f)
		}
		c.Settings.merge(s)
	}
	names := []string{c.Target.Name, c.Workload.Name}
	for _, a := range c.Axes {
		if a.Axis == AxisTarget || a.Axis == AxisWorkload {
			continue
		}
		ax := p.axis(a.Axis)
		v := ax.Values[slices.IndexFunc(ax.Values, func(v AxisValue) bool { return v.Text == a.Value })]
		set(Flag{Name: a.Axis, Values: v.Values, Line: v.Line})
		names = append(names, a.Axis+"="+a.Value)
	}
	c.Flags = flags
	c.Name = strings.Join(names, "/")
	if c.Settings.Init == "" {
		c.Settings.Init = InitNever
	}
	if c.Settings.HookTimeout == nil {
		d := DefaultHookTimeout
		c.Settings.HookTimeout = &d
	}
	c.ID = cellID(c)
}

func (p *Plan) axis(name string) *Axis {
	for i := range p.Axes {
		if p.Axes[i].Name == name {
			return &p.Axes[i]
		}
	}
	return nil
}

// merge lays the policies of s over those of m.
func (m *Settings) merge(s *Settings) {
	if s.Init != "" {
		m.Init = s.Init
	}
	if s.Cooldown != nil {
		m.Cooldown = s.Cooldown
	}
	if s.between {
		m.Between, m.between = s.Between, true
	}
	if s.Ready != nil {
		m.Ready = s.Ready
	}
	if s.Before != "" {
		m.Before = s.Before
	}
	if s.After != "" {
		m.After = s.After
	}
	if s.HookTimeout != nil {
		m.HookTimeout = s.HookTimeout
	}
}

// cellID hashes what the cell runs: the workload, the target's flags (DSN
// as written, before ${VAR} expansion) and the cell's flags sorted by name,
// so reordering the file or renaming a target keeps ids; changing a
// parameter makes a new cell.
func cellID(c *Cell) string {
	parts := []string{c.Workload.Workload}
	parts = append(parts, c.TargetArgs()...)
	var fl []string
	for _, f := range c.Flags {
		fl = append(fl, strings.Join(f.args(), "\x00"))
	}
	slices.Sort(fl)
	parts = append(parts, fl...)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x01")))
	return hex.EncodeToString(sum[:6])
}
