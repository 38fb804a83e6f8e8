package tpcb

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/script"
)

// builtinScripts are pgbench 15's builtin scripts (builtin_script[] in
// pgbench.c), run by the script engine like any -f file. Note that, as in
// pgbench, the teller of tpcb-like need not belong to the branch; and
// simple-update ("skip some updates", -N) leaves tellers and branches
// behind the history (see SkippedUpdatesError).
var builtinScripts = lazy.Value[map[string]string]{New: buildBuiltinScripts}

func buildBuiltinScripts() map[string]string {
	return map[string]string{
		ScriptTPCBLike: `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
		ScriptSimpleUpdate: `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
		ScriptSelectOnly: `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`,
	}
}

// program compiles the chosen scripts: -b NAME[@W] (and -S, -N, which are
// -b select-only and -b simple-update) and -f FILE[@W], mixed by weight as
// pgbench does; tpcb-like when none is given. names are the scripts'
// transaction type names.
func (w *Workload) program() (p *script.Program, names []string, err error) {
	p = &script.Program{}
	p.PrefixErrors("tpcb") // the workload is named in errors
	builtins := append([]string{}, w.builtins...)
	if w.selectOnly {
		builtins = append(builtins, ScriptSelectOnly)
	}
	if w.skipSome {
		builtins = append(builtins, ScriptSimpleUpdate)
	}
	if len(builtins) == 0 && len(w.files) == 0 {
		builtins = []string{ScriptTPCBLike}
	}
	weights := map[string]int{}
	for _, b := range builtins {
		arg, weight, err := script.SplitWeight(b)
		if err != nil {
			return nil, nil, err
		}
		name, err := findBuiltin(arg)
		if err != nil {
			return nil, nil, err
		}
		if _, dup := weights[name]; !dup {
			names = append(names, name)
		}
		weights[name] += weight // a builtin named twice is one script, its weights summed
	}
	for _, name := range names {
		if _, err := p.Add(name, builtinScripts.Get()[name], weights[name]); err != nil {
			return nil, nil, fmt.Errorf("builtin %s: %w", name, err) // a bug
		}
	}
	nb := len(p.Scripts())
	if err := script.LoadFiles(p, w.files); err != nil {
		return nil, nil, err
	}
	if err := script.DefineAll(p, w.defines); err != nil {
		return nil, nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	all := script.TxNames(p)
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	for _, n := range all[nb:] {
		for seen[n] {
			n += "'"
		}
		seen[n] = true
		names = append(names, n)
	}
	return p, names, nil
}

// Statements implements workload.StatementLister.
func (w *Workload) Statements(tx workload.TxType) []string {
	return w.prog.Scripts()[tx].Commands()
}

// SetSeed implements workload.Seeder: the --random-seed of the scripts.
func (w *Workload) SetSeed(seed uint64) { w.seed = seed }

// ValidateRun implements workload.RunValidator: it keeps the client count,
// which pgbench's seeding of each client depends on.
func (w *Workload) ValidateRun(clients int) error {
	w.clients = clients
	w.chooser = nil
	return nil
}

// SetThreads implements workload.Scripter: pgbench's -j, which the choice
// of scripts depends on.
func (w *Workload) SetThreads(n int) { w.threads = n }

// NewWorker implements workload.Workload. Variables :scale (unless -D
// gives it) and :client_id are set as in pgbench.
// Scripts are chosen as pgbench chooses them (script.Chooser), not with
// the driver's rng.
func (w *Workload) NewWorker(id int, _ *rand.Rand) workload.Worker {
	w.prog.DefineInt("scale", int64(w.scale))
	clients := max(w.clients, id+1)
	if w.chooser == nil {
		w.chooser = w.prog.NewChooser(w.seed, clients, w.threads)
	}
	return script.NewWorker(w.prog.NewRunner(id, clients, w.seed, w.debug), w.chooser, id)
}

// SetDebugOutput implements workload.Scripter: where the debug() function
// of -f scripts writes.
func (w *Workload) SetDebugOutput(out io.Writer) { w.debug = out }

// usesSimpleUpdate reports whether a script other than tpcb-like and
// select-only runs (then tellers and branches may lag the history).
func (w *Workload) usesSimpleUpdate() bool {
	for _, n := range w.txNames {
		if n != ScriptTPCBLike && n != ScriptSelectOnly {
			return true
		}
	}
	return false
}
