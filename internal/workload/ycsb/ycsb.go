// Package ycsb is the Yahoo! Cloud Serving Benchmark's core workloads A-F
// (YCSB's CoreWorkload and the property files workloads/workloada..f) on
// the schema of YCSB's JDBC binding: one table, usertable, with a
// VARCHAR(255) primary key YCSB_KEY and text columns FIELD0..FIELD9.
//
// Keys are "user" followed by the FNV-64 hash of the key number (YCSB's
// hashed insert order, the default) or the number itself (--insert-order
// ordered), zero-padded as YCSB's zeropadding asks. The load makes key
// numbers 0..records-1 (or its --insert-start/--insert-count slice of
// them, slice.go); each row's values are random characters of the field
// length distribution's lengths (constant, uniform, zipfian), a pure
// function of (--seed, key number), or with --data-integrity YCSB's
// deterministic values of key and field, which reads then verify.
//
// A run draws operations in the letter's proportions (overridable one by
// one) and their keys from YCSB's request distributions: zipfian (YCSB's
// scrambled zipfian, constant 0.99), uniform, latest (zipfian over the
// most recent inserts), hotspot, exponential and sequential. Inserts
// extend the key space as YCSB's acknowledged insert counter does, shared
// by all clients of the workload instance; an insert that failed never
// extends the readable space (keyspace.go). Each operation is one
// transaction type, so the summary is per operation. The statements are
// the JDBC binding's, one autocommit statement per operation
// (read-modify-write: a read, then an update, as the binding runs it with
// autocommit on). --operation-count is YCSB's operationcount: the run's
// length over all clients.
//
// The zipfian constant, the scrambled zipfian's item space and the key
// prefix are YCSB's and are not knobs.
package ycsb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// Meta describes ycsb to the registry (internal/workload/all registers it).
var Meta = workload.Meta{
	Name:        "ycsb",
	Description: "YCSB core workloads A-F (usertable as YCSB's JDBC binding)",
	New:         func() workload.Workload { return New() },
	TestFlags:   []string{"--records", "2000"},
	QueryMode:   "prepared", // YCSB's JDBC binding runs PreparedStatements
}

// Insert orders (YCSB's insertorder).
const (
	orderHashed  = "hashed"
	orderOrdered = "ordered"
)

// defaultRecords is the size of `pgarena run ycsb` on the embedded cluster
// and of `pgarena init ycsb` without --records: about 110 MB of 1 KB rows.
const defaultRecords = 100000

// Workload is the ycsb benchmark. Use New (or the registry).
type Workload struct {
	letter      string
	records     int
	fieldCount  int
	fieldLength int
	insertOrder string
	seed        uint64
	// lengthDist and minFieldLength: YCSB's fieldlengthdistribution and
	// minfieldlength; zeroPadding: its zeropadding (keyName)
	lengthDist     string
	minFieldLength int
	zeroPadding    int
	// insertStart, insertCount: YCSB's insertstart and insertcount, the
	// key numbers this init loads (a slice when not all of them)
	insertStart, insertCount int
	// integrity: YCSB's dataintegrity (values from key and field,
	// checked on read)
	integrity bool
	// operations: YCSB's operationcount, the run's length over all
	// clients (0: -T or -t decide)
	operations int
	// over holds the override flags, applied to the letter's mix by
	// Validate when given.
	over mix

	flags *pflag.FlagSet
	mix   mix // resolved by Validate
	ops   []op

	// state, set by Prepare (or from --records when a run was not
	// prepared); workers of one run share it.
	mu        sync.Mutex
	keys      *keySpace
	base      int64   // rows when the run began: uniform, hotspot and zipfian draw from these
	latestZ   float64 // zeta(base), for the workers' latest generators
	loadedRec int64   // records of the load, from its mark (-1: unknown)
	note      string
	seg, segs int // this process's segment (SetSegment); segs 0: the whole run
}

// New returns a ycsb workload with the defaults: workload A, 100000
// records of 10 fields of 100 bytes, hashed insert order.
func New() *Workload {
	w := &Workload{seed: 1, loadedRec: -1}
	fs := pflag.NewFlagSet("ycsb", pflag.ContinueOnError)
	fs.StringVar(&w.letter, "workload", "a", "core workload: a (50/50 read/update), b (95/5 read/update), c (read only), d (95/5 read/insert, latest), e (95/5 scan/insert), f (50/50 read/read-modify-write)")
	fs.IntVar(&w.records, "records", defaultRecords, "rows to load, YCSB's recordcount (init; a run counts the rows in the database; check wants at least these unless init recorded its own)")
	fs.IntVar(&w.fieldCount, "field-count", 10, "fields per row, YCSB's fieldcount (init; a run reads the columns)")
	fs.IntVar(&w.fieldLength, "field-length", 100, "bytes per field value, YCSB's fieldlength (init; a run writes values as long as the load's)")
	fs.StringVar(&w.insertOrder, "insert-order", orderHashed, "key order: hashed (\"user\" + FNV-64 hash of the key number) or ordered (\"user\" + the number), YCSB's insertorder (init; a run uses the load's)")
	fs.StringVar(&w.lengthDist, "field-length-distribution", lengthConstant, "field value lengths: constant (--field-length), uniform or zipfian (favouring short) between --min-field-length and --field-length, YCSB's fieldlengthdistribution (init; a run's updates and inserts use the load's)")
	fs.IntVar(&w.minFieldLength, "min-field-length", 1, "shortest field value of the uniform and zipfian field length distributions, YCSB's minfieldlength (init)")
	fs.IntVar(&w.zeroPadding, "zero-padding", 1, "left-pad key numbers with zeros to this many digits (\"user00000005\"), YCSB's zeropadding (init; a run uses the load's)")
	fs.IntVar(&w.insertStart, "insert-start", 0, "first key number this init loads, YCSB's insertstart: several inits with disjoint ranges load one table together (the one completing --records builds the key)")
	fs.IntVar(&w.insertCount, "insert-count", 0, "key numbers this init loads from --insert-start, YCSB's insertcount (default: up to --records)")
	fs.IntVar(&w.operations, "operation-count", 0, "operations over all clients, YCSB's operationcount: the run does exactly these (as -t, shared evenly by the clients) and the zipfian key space expects operation-count x insert-proportion x 2 inserts (default: -T or -t)")
	fs.BoolVar(&w.integrity, "data-integrity", false, "YCSB's dataintegrity: values derived from key and field (init and run), verified by every read (a mismatch fails the operation); needs the constant field length distribution")
	o := &w.over
	fs.Float64Var(&o.props[opRead], "read-proportion", 0, "share of reads (default: the workload's)")
	fs.Float64Var(&o.props[opUpdate], "update-proportion", 0, "share of updates (default: the workload's)")
	fs.Float64Var(&o.props[opInsert], "insert-proportion", 0, "share of inserts (default: the workload's)")
	fs.Float64Var(&o.props[opScan], "scan-proportion", 0, "share of scans (default: the workload's)")
	fs.Float64Var(&o.props[opReadModifyWrite], "rmw-proportion", 0, "share of read-modify-writes (default: the workload's)")
	fs.StringVar(&o.dist, "request-distribution", "", "how keys are chosen: zipfian, uniform, latest, hotspot, exponential or sequential (default: the workload's)")
	fs.Float64Var(&o.expPercentile, "exponential-percentile", defaultExpPercentile, "exponential: the percent of operations on the newest --exponential-frac of the rows, YCSB's exponential.percentile")
	fs.Float64Var(&o.expFrac, "exponential-frac", defaultExpFrac, "exponential: the fraction of the rows, counted back from the newest, that gets --exponential-percentile of the operations, YCSB's exponential.frac")
	fs.IntVar(&o.maxScan, "max-scan-length", 0, "most rows a scan reads (default: 100 for e, else YCSB's 1000)")
	fs.IntVar(&o.minScan, "min-scan-length", 1, "fewest rows a scan reads, YCSB's minscanlength")
	fs.StringVar(&o.scanDist, "scan-length-distribution", distUniform, "scan length between 1 and --max-scan-length: uniform or zipfian")
	fs.Float64Var(&o.hotData, "hotspot-data-fraction", 0.2, "hotspot: the fraction of keys that are hot")
	fs.Float64Var(&o.hotOpn, "hotspot-opn-fraction", 0.8, "hotspot: the fraction of operations on the hot keys")
	fs.BoolVar(&o.readAll, "read-all-fields", true, "reads and scans fetch every field (false: one random field)")
	fs.BoolVar(&o.writeAll, "write-all-fields", false, "updates and read-modify-writes write every field (false: one random field)")
	workload.ForVerbs(fs, workload.InitVerbs, "field-count", "field-length", "insert-order",
		"field-length-distribution", "min-field-length", "zero-padding")
	workload.ForVerbs(fs, []string{workload.VerbInit}, "insert-start", "insert-count")
	workload.ForVerbs(fs, workload.InitVerbs, "data-integrity")
	// check reads --records for a table init did not mark (loaded by YCSB)
	workload.ForVerbs(fs, []string{workload.VerbInit, workload.VerbRun, workload.VerbCheck}, "records")
	runFlags := []string{"workload", "operation-count", "request-distribution", "exponential-percentile", "exponential-frac",
		"max-scan-length", "min-scan-length", "scan-length-distribution",
		"hotspot-data-fraction", "hotspot-opn-fraction", "read-all-fields", "write-all-fields"}
	workload.ForVerbs(fs, []string{workload.VerbRun}, append(runFlags, opFlags[:]...)...)
	w.flags = fs
	return w
}

// Meta implements workload.Workload.
func (w *Workload) Meta() workload.Meta {
	return Meta
}

// Flags implements workload.Flagser.
func (w *Workload) Flags() *pflag.FlagSet { return w.flags }

// SetSeed implements workload.Seeder: the seed of the loaded values.
func (w *Workload) SetSeed(seed uint64) { w.seed = seed }

// OperationCount implements workload.OperationCounter: --operation-count.
func (w *Workload) OperationCount() int { return w.operations }

// Validate implements workload.Workload: the parameters, and the mix of
// the letter with the overrides given.
func (w *Workload) Validate() error {
	switch {
	case w.records < 1:
		return fmt.Errorf("--records must be at least 1 (got %d)", w.records)
	case w.fieldCount < 1 || w.fieldCount > 1000:
		return fmt.Errorf("--field-count must be between 1 and 1000 (got %d)", w.fieldCount)
	case w.fieldLength < 1 || w.fieldLength > 1<<20:
		return fmt.Errorf("--field-length must be between 1 and 1048576 (got %d)", w.fieldLength)
	case w.insertOrder != orderHashed && w.insertOrder != orderOrdered:
		return fmt.Errorf("--insert-order %q: want hashed or ordered", w.insertOrder)
	case w.lengthDist != lengthConstant && w.lengthDist != lengthUniform && w.lengthDist != lengthZipfian:
		return fmt.Errorf("--field-length-distribution %q: want constant, uniform or zipfian", w.lengthDist)
	case w.minFieldLength < 1 || w.minFieldLength > w.fieldLength:
		return fmt.Errorf("--min-field-length must be between 1 and --field-length %d (got %d)", w.fieldLength, w.minFieldLength)
	case w.integrity && w.lengthDist != lengthConstant:
		return fmt.Errorf("--data-integrity needs --field-length-distribution constant (got %s), as YCSB's dataintegrity does", w.lengthDist)
	case w.operations < 0:
		return fmt.Errorf("--operation-count must be at least 1 (got %d)", w.operations)
	case w.zeroPadding < 1 || w.zeroPadding > 100:
		return fmt.Errorf("--zero-padding must be between 1 and 100 (got %d)", w.zeroPadding)
	}
	if err := w.validateInsertRange(); err != nil {
		return err
	}
	m, err := letterMix(w.letter)
	if err != nil {
		return err
	}
	changed := w.flags.Changed
	for i, name := range opFlags {
		if changed(name) {
			m.props[i] = w.over.props[i]
		}
	}
	if changed("request-distribution") {
		m.dist = w.over.dist
	}
	if changed("max-scan-length") {
		m.maxScan = w.over.maxScan
	}
	m.scanDist, m.hotData, m.hotOpn = w.over.scanDist, w.over.hotData, w.over.hotOpn
	m.minScan, m.expPercentile, m.expFrac = w.over.minScan, w.over.expPercentile, w.over.expFrac
	m.readAll, m.writeAll = w.over.readAll, w.over.writeAll
	if err := m.validate(); err != nil {
		return err
	}
	w.mix, w.ops = m, m.active()
	return nil
}

// TxTypes implements workload.Workload: the operations the mix runs, in
// the order read, update, insert, scan, read_modify_write.
func (w *Workload) TxTypes() []string {
	if w.ops == nil {
		_ = w.Validate() // its error is reported by the caller's Validate
	}
	names := make([]string, len(w.ops))
	for i, o := range w.ops {
		names[i] = opNames[o]
	}
	return names
}

// Params implements workload.Flagser.
func (w *Workload) Params() map[string]string {
	m := w.mix
	p := map[string]string{
		"workload":                  m.workloadName,
		"records":                   strconv.Itoa(w.records),
		"field_count":               strconv.Itoa(w.fieldCount),
		"field_length":              strconv.Itoa(w.fieldLength),
		"insert_order":              w.insertOrder,
		"request_distribution":      m.dist,
		"field_length_distribution": w.lengthDist,
		"zero_padding":              strconv.Itoa(w.zeroPadding),
		"data_integrity":            strconv.FormatBool(w.integrity),
		"read_all_fields":           strconv.FormatBool(m.readAll),
		"write_all_fields":          strconv.FormatBool(m.writeAll),
	}
	for i, name := range opNames {
		p[name+"_proportion"] = strconv.FormatFloat(m.props[i], 'g', -1, 64)
	}
	if m.props[opScan] > 0 {
		p["max_scan_length"] = strconv.Itoa(m.maxScan)
		p["min_scan_length"] = strconv.Itoa(m.minScan)
		p["scan_length_distribution"] = m.scanDist
	}
	if w.operations > 0 {
		p["operation_count"] = strconv.Itoa(w.operations)
	}
	if w.lengthDist != lengthConstant {
		p["min_field_length"] = strconv.Itoa(w.minFieldLength)
	}
	if m.dist == distExponential {
		p["exponential_percentile"] = strconv.FormatFloat(m.expPercentile, 'g', -1, 64)
		p["exponential_frac"] = strconv.FormatFloat(m.expFrac, 'g', -1, 64)
	}
	if m.dist == distHotspot {
		p["hotspot_data_fraction"] = strconv.FormatFloat(m.hotData, 'g', -1, 64)
		p["hotspot_opn_fraction"] = strconv.FormatFloat(m.hotOpn, 'g', -1, 64)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys != nil {
		p["rows_at_start"] = strconv.FormatInt(w.base, 10)
	}
	if w.note != "" {
		p["note"] = w.note
	}
	return p
}

// Prepare implements workload.Preparer. It counts the rows (a run's
// inserts take key numbers from there on, and its reads draw from them),
// reads the field columns, and reads the load's parameters from the mark
// init left (record count, insert order, field length and its
// distribution, zero padding, data integrity); the database wins over the
// flags, with a note for a flag given that differs, and a run with
// --data-integrity on a load without it is refused. A load by slices
// that is not complete is refused. A table without the mark (loaded by
// YCSB itself) is taken as it is, with the flags' parameters.
func (w *Workload) Prepare(ctx context.Context, conn pgtext.Querier) error {
	missing, err := workload.FirstMissing(ctx, conn, []string{table}, false)
	if err != nil {
		return fmt.Errorf("ycsb: look for %s: %w", table, err)
	}
	if missing != "" {
		return fmt.Errorf("database is not initialised for ycsb (table %s is missing): run `pgarena init ycsb` first", table)
	}
	var rows int64
	var fields []string
	var mark, tableMark string
	err = conn.QueryRow(ctx, `select (select count(*) from usertable),
		array(select attname::text from pg_attribute where attrelid = 'usertable'::regclass
			and attnum > 0 and not attisdropped and attname ~ '^field[0-9]+$' order by attnum),
		coalesce(col_description('usertable'::regclass,
			(select attnum from pg_attribute where attrelid = 'usertable'::regclass and attname = 'ycsb_key')), ''),
		coalesce(obj_description('usertable'::regclass, 'pg_class'), '')`).
		Scan(&rows, &fields, &mark, &tableMark)
	if err != nil {
		return fmt.Errorf("ycsb: read %s: %w", table, err)
	}
	if i := strings.Index(tableMark, "; slices "); i >= 0 && !strings.Contains(tableMark, "; keys built") {
		return fmt.Errorf("ycsb: the load by --insert-start/--insert-count is incomplete (key numbers loaded: %s): load the missing ones first",
			strings.TrimPrefix(tableMark[i:], "; slices "))
	}
	if rows == 0 {
		return errors.New("ycsb: usertable is empty: run `pgarena init ycsb` again")
	}
	for i, f := range fields {
		if f != "field"+strconv.Itoa(i) {
			return fmt.Errorf("ycsb: usertable's columns are %s: want field0..fieldN-1", strings.Join(fields, ", "))
		}
	}
	if len(fields) == 0 {
		return errors.New("ycsb: usertable has no field0 column")
	}
	var notes []string
	adopt := func(flag string, have *int, db int) {
		if w.flags.Changed(flag) && *have != db {
			notes = append(notes, fmt.Sprintf("--%s %d ignored: the database has %d", flag, *have, db))
		}
		*have = db
	}
	adopt("field-count", &w.fieldCount, len(fields))
	w.loadedRec = -1
	if load, ok := parseMark(mark); ok {
		w.loadedRec = load.records
		adopt("records", &w.records, int(load.records))
		adopt("field-length", &w.fieldLength, load.fieldLength)
		if w.flags.Changed("insert-order") && w.insertOrder != load.insertOrder {
			notes = append(notes, fmt.Sprintf("--insert-order %s ignored: the database was loaded %s", w.insertOrder, load.insertOrder))
		}
		w.insertOrder = load.insertOrder
		adopt("zero-padding", &w.zeroPadding, load.zeroPadding)
		adopt("min-field-length", &w.minFieldLength, load.minFieldLength)
		if w.flags.Changed("field-length-distribution") && w.lengthDist != load.lengthDist {
			notes = append(notes, fmt.Sprintf("--field-length-distribution %s ignored: the database was loaded %s", w.lengthDist, load.lengthDist))
		}
		w.lengthDist = load.lengthDist
		if w.integrity && !load.integrity {
			return errors.New("ycsb: --data-integrity: the database was loaded without it, so its values cannot be verified: run `pgarena init ycsb --data-integrity` first")
		}
	}
	if w.integrity && w.lengthDist != lengthConstant {
		return fmt.Errorf("ycsb: --data-integrity needs constant field lengths; the database was loaded with --field-length-distribution %s", w.lengthDist)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.note = strings.Join(notes, "; ")
	w.setKeys(rows)
	return nil
}

// loadParams are the parameters of a load, from its mark. Marks written
// before a parameter existed lack it: YCSB's default is taken.
type loadParams struct {
	records        int64
	insertOrder    string
	fieldLength    int
	lengthDist     string
	minFieldLength int
	zeroPadding    int
	integrity      bool
}

// mark is the text init records on usertable.ycsb_key (loadMark).
func (w *Workload) mark() string {
	return fmt.Sprintf("%s records=%d insert_order=%s field_length=%d field_length_distribution=%s min_field_length=%d zero_padding=%d data_integrity=%t",
		loadMark, w.records, w.insertOrder, w.fieldLength, w.lengthDist, w.minFieldLength, w.zeroPadding, w.integrity)
}

func parseMark(mark string) (loadParams, bool) {
	rest, ok := strings.CutPrefix(mark, loadMark)
	if !ok {
		return loadParams{}, false
	}
	p := loadParams{lengthDist: lengthConstant, minFieldLength: 1, zeroPadding: 1}
	for _, kv := range strings.Fields(rest) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "records":
			p.records, _ = strconv.ParseInt(v, 10, 64)
		case "insert_order":
			p.insertOrder = v
		case "field_length":
			p.fieldLength, _ = strconv.Atoi(v)
		case "field_length_distribution":
			p.lengthDist = v
		case "min_field_length":
			p.minFieldLength, _ = strconv.Atoi(v)
		case "zero_padding":
			p.zeroPadding, _ = strconv.Atoi(v)
		case "data_integrity":
			p.integrity = v == "true"
		}
	}
	ok = p.records > 0 && p.fieldLength > 0 && (p.insertOrder == orderHashed || p.insertOrder == orderOrdered) &&
		(p.lengthDist == lengthConstant || p.lengthDist == lengthUniform || p.lengthDist == lengthZipfian) &&
		p.minFieldLength >= 1 && p.minFieldLength <= p.fieldLength && p.zeroPadding >= 1
	return p, ok
}

// SetSegment implements workload.Segmenter: segment index of count
// inserts its own stripe of the new key numbers (keyspace.go), and reads
// the loaded rows and its own inserts. Segments must count the same rows
// when they start (Prepare), as they do when none inserts before the
// others have prepared (--agents and --start-at).
func (w *Workload) SetSegment(index, count int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seg, w.segs = index, count
	if w.keys != nil {
		w.setKeys(w.base)
	}
}

// setKeys starts the key space at rows existing rows. w.mu is held.
func (w *Workload) setKeys(rows int64) {
	w.keys = newKeySpace(rows, w.seg, w.segs)
	w.base = rows
	w.latestZ = zeta(rows, zipfianConstant)
}

// NewWorker implements workload.Workload.
func (w *Workload) NewWorker(id int, rng *rand.Rand) workload.Worker {
	if w.ops == nil {
		_ = w.Validate()
	}
	w.mu.Lock()
	if w.keys == nil {
		// not prepared (tests that drive the workload right after a
		// load): the load's rows
		w.setKeys(int64(w.records))
	}
	keys, base, latestZ := w.keys, w.base, w.latestZ
	w.mu.Unlock()
	return newWorker(w, keys, base, latestZ, rng)
}
