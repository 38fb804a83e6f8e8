package script

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/workload"
)

// Meta describes script to the registry (internal/workload/all registers it).
var Meta = workload.Meta{
	Name:        "script",
	Description: "pgbench custom scripts (-f FILE[@WEIGHT], -D NAME=VALUE) on any database",
	New:         func() workload.Workload { return NewWorkload() },
	// testdata/tiny.sql, from internal/workload/all where the test of every
	// workload runs.
	TestFlags:  []string{"-f", "../script/testdata/tiny.sql"},
	PgConnOnly: true,
}

// Workload runs pgbench script files on any database: it has no tables
// (init creates nothing, check checks nothing).
type Workload struct {
	files   []string
	defines []string
	scale   int
	flags   *pflag.FlagSet

	prog    *Program
	seed    uint64
	clients int
	threads int
	chooser *Chooser
	debug   io.Writer
}

// NewWorkload returns a script workload without scripts: -f gives them.
func NewWorkload() *Workload {
	w := &Workload{seed: 1, clients: 1, threads: 1}
	fs := pflag.NewFlagSet("script", pflag.ContinueOnError)
	AddFlags(fs, &w.files, &w.defines)
	// pgbench's -s with custom scripts: only the value of :scale (pgbench
	// reads pgbench_branches for its builtin scripts only)
	fs.IntVarP(&w.scale, "scale", "s", 1, "the value of :scale in the scripts (unless -D scale=... gives it), as pgbench -s")
	workload.ForVerbs(fs, []string{workload.VerbRun}, "scale")
	w.flags = fs
	return w
}

// AddFlags defines pgbench's -f FILE[@WEIGHT] and -D NAME=VALUE on fs (for
// the script workload and for tpcb).
func AddFlags(fs *pflag.FlagSet, files, defines *[]string) {
	workload.StringArrayVarP(fs, files, "file", "f", "pgbench script FILE[@WEIGHT] (repeatable; a weight picks scripts in proportion)")
	workload.StringArrayVarP(fs, defines, "define", "D", "script variable NAME=VALUE every client starts with (repeatable)")
	workload.ForVerbs(fs, []string{workload.VerbRun}, "file", "define")
}

// Meta implements workload.Workload.
func (w *Workload) Meta() workload.Meta {
	return Meta
}

// Flags implements workload.Flagser.
func (w *Workload) Flags() *pflag.FlagSet { return w.flags }

// SetSeed implements workload.Seeder: the --random-seed of the scripts'
// random functions.
func (w *Workload) SetSeed(seed uint64) { w.seed = seed }

// SetThreads implements workload.Scripter: pgbench's -j, which the choice
// of scripts depends on.
func (w *Workload) SetThreads(n int) { w.threads = n }

// SetDebugOutput implements workload.Scripter: where the debug() function
// writes (nowhere by default).
func (w *Workload) SetDebugOutput(out io.Writer) { w.debug = out }

// ValidateRun implements workload.RunValidator: a run needs a script. It
// keeps the client count, which pgbench's seeding of each client depends
// on.
func (w *Workload) ValidateRun(clients int) error {
	if w.prog == nil {
		return fmt.Errorf("no script: give -f FILE[@WEIGHT]")
	}
	w.clients = clients
	w.chooser = nil
	return nil
}

// Validate implements workload.Workload: it reads and parses the scripts.
// A syntax error names file:line:column.
func (w *Workload) Validate() error {
	if len(w.files) == 0 {
		return nil // init, check and drop need no script; a run does (ValidateRun)
	}
	p := &Program{}
	if err := LoadFiles(p, w.files); err != nil {
		return err
	}
	if err := DefineAll(p, w.defines); err != nil {
		return err
	}
	if w.scale < 1 || w.scale > math.MaxInt32 {
		return fmt.Errorf("-s/--scale must be in range 1..%d (got %d)", math.MaxInt32, w.scale)
	}
	p.DefineInt("scale", int64(w.scale))
	if err := p.Validate(); err != nil {
		return err
	}
	w.prog = p
	return nil
}

// LoadFiles parses -f arguments (FILE[@WEIGHT]) into p.
func LoadFiles(p *Program, args []string) error {
	for _, a := range args {
		name, weight, err := SplitWeight(a)
		if err != nil {
			return err
		}
		text, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("script %s: %w", name, err)
		}
		if _, err := p.Add(name, string(text), weight); err != nil {
			return err
		}
	}
	return nil
}

// DefineAll applies -D NAME=VALUE arguments to p.
func DefineAll(p *Program, defs []string) error {
	for _, d := range defs {
		name, val, ok := strings.Cut(d, "=")
		if !ok {
			return fmt.Errorf("-D %s: expected NAME=VALUE", d)
		}
		if err := p.Define(name, val); err != nil {
			return err
		}
	}
	return nil
}

// Tables implements workload.Workload: none.
func (w *Workload) Tables() []workload.Table { return nil }

// TxTypes implements workload.Workload: one per script, named by TxNames.
func (w *Workload) TxTypes() []string {
	if w.prog == nil {
		return []string{"script"}
	}
	return TxNames(w.prog)
}

// TxNames names the scripts of p for the report: the file's base name,
// numbered when two share one.
func TxNames(p *Program) []string {
	out := make([]string, len(p.scripts))
	seen := map[string]int{}
	for i, s := range p.scripts {
		n := strings.TrimSuffix(filepath.Base(s.Name), ".sql")
		seen[n]++
		if seen[n] > 1 {
			n += "#" + strconv.Itoa(seen[n])
		}
		out[i] = n
	}
	return out
}

// Statements implements workload.StatementLister.
func (w *Workload) Statements(tx workload.TxType) []string {
	return w.prog.scripts[tx].Commands()
}

// Params implements workload.Flagser.
func (w *Workload) Params() map[string]string {
	return map[string]string{"scripts": strings.Join(w.files, " "), "random_seed": strconv.FormatUint(w.seed, 10),
		"scale": strconv.Itoa(w.scale)}
}

// NewWorker implements workload.Workload. The driver's rng is not used:
// scripts are chosen as pgbench chooses them (Chooser).
func (w *Workload) NewWorker(id int, _ *rand.Rand) workload.Worker {
	clients := max(w.clients, id+1)
	if w.chooser == nil {
		w.chooser = w.prog.NewChooser(w.seed, clients, w.threads)
	}
	return NewWorker(w.prog.NewRunner(id, clients, w.seed, w.debug), w.chooser, id)
}

// NewWorker makes r the workload.Worker of client id: Next picks a
// script by weight with ch, Do runs it.
func NewWorker(r *Runner, ch *Chooser, id int) *Runner {
	r.chooser, r.id = ch, id
	return r
}

// Next implements workload.Worker.
func (r *Runner) Next() workload.TxType {
	return workload.TxType(r.chooser.Next(r.id))
}
