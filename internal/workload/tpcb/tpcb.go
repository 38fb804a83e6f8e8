// Package tpcb is pgbench's TPC-B-like benchmark, compatible with pgbench 15:
// the same four tables with the same columns, fill factor, initial data and
// primary keys as `pgbench -i`, and the same three builtin scripts
// (tpcb-like, simple-update, select-only) sent statement by statement in the
// same order and over the same protocol as `pgbench -M simple|extended|
// prepared`. A database initialised by `pgarena init tpcb` can be run by
// pgbench and the other way round; results of the two are comparable.
//
// It registers itself as "tpcb". Like pgbench, a run reads the scale from
// the database (the number of rows of pgbench_branches) rather than from
// --scale.
//
// The constants below (rows per scale unit, the 20000 threshold for bigint
// keys, the variable ranges) are pgbench's and are not knobs.
package tpcb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/script"
)

// Rows per unit of scale, as pgbench's nbranches, ntellers and naccounts.
const (
	branchesPerScale = 1
	tellersPerScale  = 10
	accountsPerScale = 100000
)

// bigintScale is pgbench's SCALE_32BIT_THRESHOLD: from this scale on, aid
// columns are bigint because 100000*scale no longer fits an int4.
const bigintScale = 20000

// Script names, as pgbench's -b accepts them.
const (
	ScriptTPCBLike     = "tpcb-like"
	ScriptSimpleUpdate = "simple-update"
	ScriptSelectOnly   = "select-only"
)

var scripts = []string{ScriptTPCBLike, ScriptSimpleUpdate, ScriptSelectOnly}

// Meta describes tpcb to the registry (internal/workload/all registers it).
var Meta = workload.Meta{
	Name:        "tpcb",
	Description: "TPC-B-like, pgbench compatible",
	New:         func() workload.Workload { return New() },
	PgConnOnly:  true, // the script engine's
}

// Workload is the tpcb benchmark. Its zero value is not ready: use New (or
// the registry), which sets pgbench's defaults.
type Workload struct {
	scale      int
	fillfactor int
	selectOnly bool     // -S
	skipSome   bool     // -N
	builtins   []string // -b NAME[@WEIGHT]
	files      []string // -f FILE[@WEIGHT]
	defines    []string // -D NAME=VALUE
	partitions int
	unlogged   bool
	serverNum  int // server_version_num of the init target (PrepareInit); 0 = not known

	flags *pflag.FlagSet

	prog    *script.Program // the scripts, compiled by Validate
	txNames []string
	seed    uint64
	clients int
	threads int             // pgbench's -j: the scripts' choice follows it
	chooser *script.Chooser // made by the first NewWorker of a run
	debug   io.Writer       // debug() of -f scripts
	// note is set by Prepare when --scale was given and the database
	// disagrees.
	note string
}

// New returns a tpcb workload with pgbench's defaults: scale 1, fill factor
// 100, the tpcb-like script, no partitions, logged tables.
func New() *Workload {
	w := &Workload{scale: 1, fillfactor: 100, seed: 1, clients: 1, threads: 1}
	fs := pflag.NewFlagSet("tpcb", pflag.ContinueOnError)
	fs.IntVarP(&w.scale, "scale", "s", 1, "scale factor: 1 branch, 10 tellers and 100000 accounts per unit (init; a run reads it from the database)")
	fs.IntVar(&w.fillfactor, "fillfactor", 100, "fill factor of pgbench_accounts, _tellers and _branches, 10..100 (init)")
	fs.BoolVarP(&w.selectOnly, "select-only", "S", false, "run the select-only script (same as -b select-only)")
	fs.BoolVarP(&w.skipSome, "skip-some-updates", "N", false, "run the simple-update script (same as -b simple-update)")
	workload.StringArrayVarP(fs, &w.builtins, "builtin", "b", "builtin script NAME[@WEIGHT]: tpcb-like, simple-update or select-only (a unique prefix will do; repeatable, mixes with -f, as in pgbench)")
	script.AddFlags(fs, &w.files, &w.defines)
	fs.IntVar(&w.partitions, "partitions", 0, "range-partition pgbench_accounts into this many partitions, 0 for none (init)")
	fs.BoolVar(&w.unlogged, "unlogged", false, "create unlogged tables (init)")
	fs.BoolVar(&w.unlogged, "unlogged-tables", false, "pgbench's name for --unlogged")
	_ = fs.MarkHidden("unlogged-tables")
	workload.ForVerbs(fs, workload.InitVerbs, "scale", "fillfactor", "partitions", "unlogged", "unlogged-tables")
	// check reads -N/-b: simple-update runs leave tellers and branches
	// behind the accounts (check.go).
	workload.ForVerbs(fs, []string{workload.VerbRun, workload.VerbCheck}, "select-only", "skip-some-updates", "builtin")
	w.flags = fs
	return w
}

// Meta implements workload.Workload.
func (w *Workload) Meta() workload.Meta {
	return Meta
}

// Flags implements workload.Flagser.
func (w *Workload) Flags() *pflag.FlagSet { return w.flags }

// Validate implements workload.Workload.
func (w *Workload) Validate() error {
	if w.scale < 1 {
		return fmt.Errorf("scale must be at least 1 (got %d)", w.scale)
	}
	if w.fillfactor < 10 || w.fillfactor > 100 {
		return fmt.Errorf("fillfactor must be between 10 and 100 (got %d)", w.fillfactor)
	}
	if w.partitions < 0 {
		return fmt.Errorf("partitions must not be negative (got %d)", w.partitions)
	}
	p, names, err := w.program()
	if err != nil {
		return err
	}
	w.prog, w.txNames = p, names
	return nil
}

// findBuiltin matches name against the builtin scripts as pgbench's
// findBuiltin does: an exact name or a unique prefix.
func findBuiltin(name string) (string, error) {
	var found []string
	for _, s := range scripts {
		if s == name {
			return s, nil
		}
		if strings.HasPrefix(s, name) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("no builtin script %q (available: %s)", name, strings.Join(scripts, ", "))
	default:
		return "", fmt.Errorf("ambiguous builtin script %q (matches %s)", name, strings.Join(found, ", "))
	}
}

// TxTypes implements workload.Workload: one per script, builtins by
// their names, files by their base names.
func (w *Workload) TxTypes() []string {
	if w.txNames == nil {
		return []string{ScriptTPCBLike} // before Validate
	}
	return w.txNames
}

// Params implements workload.Flagser. After Prepare, scale,
// fillfactor, partitions and unlogged are the database's, not the flags'.
func (w *Workload) Params() map[string]string {
	p := map[string]string{
		"scale":      strconv.Itoa(w.scale),
		"fillfactor": strconv.Itoa(w.fillfactor),
		"script":     strings.Join(w.TxTypes(), " "),
		"partitions": strconv.Itoa(w.partitions),
	}
	if w.unlogged {
		p["unlogged"] = "true"
	}
	if w.note != "" {
		p["note"] = w.note
	}
	return p
}

// Prepare implements workload.Preparer. It reads the scale from the
// database as pgbench does (select count(*) from pgbench_branches), and the
// number of partitions, the fill factor and the persistence of
// pgbench_accounts. The database wins over --scale, --fillfactor and
// --partitions; if one was given and differs, Params carries a note saying
// so (pgbench prints "scale option ignored, using count from
// pgbench_branches table").
func (w *Workload) Prepare(ctx context.Context, conn pgtext.Querier) error {
	missing, err := workload.FirstMissing(ctx, conn,
		[]string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"}, false)
	if err != nil {
		return fmt.Errorf("tpcb: look for tables: %w", err)
	}
	if missing != "" {
		return fmt.Errorf("database is not initialised for tpcb (table %s is missing): run `pgarena init tpcb` first", missing)
	}
	var branches int64
	if err := conn.QueryRow(ctx, "select count(*) from pgbench_branches").Scan(&branches); err != nil {
		return fmt.Errorf("tpcb: read scale: %w", err)
	}
	if branches == 0 {
		// pgbench: "count(*) from pgbench_branches invalid (0)"
		return errors.New("tpcb: pgbench_branches is empty: run `pgarena init tpcb` again")
	}
	var parts int
	if err := conn.QueryRow(ctx, `select count(*) from pg_inherits
		where inhparent = 'pgbench_accounts'::regclass`).Scan(&parts); err != nil {
		return fmt.Errorf("tpcb: read partitions: %w", err)
	}
	// The storage options of pgbench_accounts, or of its first partition
	// (a partitioned parent has none).
	var ff int
	var unlogged bool
	if err := conn.QueryRow(ctx, `select coalesce((select option_value::int from pg_options_to_table(c.reloptions)
			where option_name = 'fillfactor'), 100), c.relpersistence = 'u'
		from pg_class c
		where c.oid = 'pgbench_accounts'::regclass and c.relkind = 'r'
			or c.oid = (select i.inhrelid from pg_inherits i join pg_class p on p.oid = i.inhrelid
				where i.inhparent = 'pgbench_accounts'::regclass order by p.relname limit 1)
		limit 1`).Scan(&ff, &unlogged); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("tpcb: read the fill factor of pgbench_accounts: %w", err)
	} else if err != nil {
		ff = 100 // a partitioned table without partitions
	}
	var notes []string
	if w.flags.Changed("scale") && int64(w.scale) != branches {
		notes = append(notes, fmt.Sprintf("--scale %d ignored: the database has scale %d", w.scale, branches))
	}
	if w.flags.Changed("fillfactor") && w.fillfactor != ff {
		notes = append(notes, fmt.Sprintf("--fillfactor %d ignored: pgbench_accounts has fillfactor %d", w.fillfactor, ff))
	}
	if w.flags.Changed("partitions") && w.partitions != parts {
		notes = append(notes, fmt.Sprintf("--partitions %d ignored: pgbench_accounts has %d", w.partitions, parts))
	}
	w.note = strings.Join(notes, "; ")
	w.scale, w.partitions, w.fillfactor, w.unlogged = int(branches), parts, ff, unlogged
	return nil
}
