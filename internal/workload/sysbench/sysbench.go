// Package sysbench is sysbench 1.0's OLTP family for PostgreSQL: the same
// tables as `sysbench oltp_* prepare --db-driver=pgsql` (sbtest1..N with
// id, k, c char(120), pad char(60), the primary key on id and the index k_N
// on k) and the same tests, one event per transaction, statement by statement
// as the Lua scripts of /usr/share/sysbench (oltp_common.lua and one script per
// test) send them, with their options and random distributions.
//
// It registers itself as "sysbench"; the test is a positional argument:
// `pgarena run sysbench oltp_point_select` (oltp_read_write when none is
// given). A database that `sysbench prepare` loaded can be run by pgarena
// (its tables are read, never marked or altered) and one that `pgarena init
// sysbench` loaded can be run by sysbench.
//
// Like sysbench's pgsql driver, statements are prepared per connection (the
// default protocol is prepared: PQprepare with int4 and bpchar parameters,
// results in binary); -M simple and -M extended send the same statements over
// the other protocols. sysbench counts a transaction that fails on a
// deadlock, a unique violation or a serialization failure as "ignored" and
// runs it again; pgarena counts it as failed (with its SQLSTATE), and retries
// it with --max-tries.
package sysbench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// The tests: one Lua script of sysbench 1.0 each.
const (
	TestReadWrite          = "oltp_read_write"
	TestReadOnly           = "oltp_read_only"
	TestWriteOnly          = "oltp_write_only"
	TestPointSelect        = "oltp_point_select"
	TestUpdateIndex        = "oltp_update_index"
	TestUpdateNonIndex     = "oltp_update_non_index"
	TestInsert             = "oltp_insert"
	TestDelete             = "oltp_delete"
	TestSelectRandomPoints = "select_random_points"
	TestSelectRandomRanges = "select_random_ranges"
)

// Tests lists the tests in the order help shows them.
var Tests = []string{TestReadWrite, TestReadOnly, TestWriteOnly, TestPointSelect, TestUpdateIndex,
	TestUpdateNonIndex, TestInsert, TestDelete, TestSelectRandomPoints, TestSelectRandomRanges}

// Meta describes sysbench to the registry (internal/workload/all registers it).
var Meta = workload.Meta{
	Name:        "sysbench",
	Description: "sysbench 1.0 OLTP tests (oltp_read_write, oltp_point_select, ...), sysbench compatible",
	New:         func() workload.Workload { return New() },
	TestFlags:   []string{"--tables", "2", "--table-size", "10000"},
	QueryMode:   "prepared", // sysbench's pgsql driver prepares its statements
	PgConnOnly:  true,
}

// Workload is the sysbench OLTP family. Use New (or the registry), which
// sets sysbench's defaults.
type Workload struct {
	test string

	tables, tableSize int
	autoInc           bool
	secondary         bool
	createSecondary   bool

	rangeSize, pointSelects, simpleRanges, sumRanges, orderRanges, distinctRanges int
	indexUpdates, nonIndexUpdates, deleteInserts                                  int
	rangeSelects, skipTrx                                                         bool
	randomPoints, numberOfRanges, delta                                           int

	randType                               string
	randSpecIter, randSpecPct, randSpecRes int
	randParetoH                            float64
	dist                                   distribution

	seed    uint64
	clients int // from ValidateRun: select_random_* split the k range by client
	unique  *uniqueSeq
	// seg of segs is this process's segment (--segment): its share of
	// oltp_insert's unique ids.
	seg, segs int
	flags     *pflag.FlagSet
	// notes are set by Prepare: what it read from the database.
	notes []string
	// sizeGiven: --table-size was given; otherwise Prepare read it from
	// the load's mark, or counted sbtest1
	sizeGiven bool
	// loaded is the rows init loaded per table, from its mark (-1: not
	// marked, tables sysbench made)
	loaded int64
	// sliced: init loads batches [sliceLo, sliceHi) of every table
	// (slice.go)
	sliced           bool
	sliceLo, sliceHi int
}

// loadMark begins the comment init puts on sbtestN.id, followed by the
// rows it loaded: rows added and removed later (oltp_insert, oltp_delete)
// do not change what the runs draw ids from and what check compares with.
const loadMark = "pgarena:sysbench loaded rows="

// New returns a workload with sysbench 1.0.20's defaults.
func New() *Workload {
	w := &Workload{test: TestReadWrite, seed: 1}
	fs := pflag.NewFlagSet("sysbench", pflag.ContinueOnError)
	fs.IntVar(&w.tables, "tables", 1, "number of tables sbtest1..N (a run without it uses the tables it finds)")
	fs.IntVar(&w.tableSize, "table-size", 10000, "rows per table (a run without it reads the rows of sbtest1)")
	onOff(fs, &w.autoInc, "auto-inc", true, "id is SERIAL (sysbench's pgsql alternative to AUTO_INCREMENT); off: client-generated ids (init; oltp_insert)")
	onOff(fs, &w.secondary, "secondary", false, "a secondary index on id (xid_N) in place of the primary key (init)")
	onOff(fs, &w.createSecondary, "create-secondary", true, "create the index k_N on k (init)")
	workload.ForVerbs(fs, []string{workload.VerbInit, workload.VerbRun, workload.VerbCheck}, "tables", "table-size")
	workload.ForVerbs(fs, []string{workload.VerbInit, workload.VerbRun, workload.VerbCheck}, "auto-inc", "secondary", "create-secondary")

	fs.IntVar(&w.rangeSize, "range-size", 100, "range size of the range SELECTs")
	fs.IntVar(&w.pointSelects, "point-selects", 10, "point SELECTs per transaction (oltp_point_select: always 1)")
	fs.IntVar(&w.simpleRanges, "simple-ranges", 1, "simple range SELECTs per transaction")
	fs.IntVar(&w.sumRanges, "sum-ranges", 1, "SELECT SUM() ranges per transaction")
	fs.IntVar(&w.orderRanges, "order-ranges", 1, "SELECT ... ORDER BY ranges per transaction")
	fs.IntVar(&w.distinctRanges, "distinct-ranges", 1, "SELECT DISTINCT ranges per transaction")
	fs.IntVar(&w.indexUpdates, "index-updates", 1, "UPDATEs of the indexed column k per transaction")
	fs.IntVar(&w.nonIndexUpdates, "non-index-updates", 1, "UPDATEs of the non-indexed column c per transaction")
	fs.IntVar(&w.deleteInserts, "delete-inserts", 1, "DELETE/INSERT pairs per transaction")
	onOff(fs, &w.rangeSelects, "range-selects", true, "run the range SELECTs")
	onOff(fs, &w.skipTrx, "skip-trx", false, "no BEGIN/COMMIT: every statement in autocommit")
	fs.IntVar(&w.randomPoints, "random-points", 10, "values in the IN() list of select_random_points")
	fs.IntVar(&w.numberOfRanges, "number-of-ranges", 10, "BETWEEN ranges per SELECT of select_random_ranges")
	fs.IntVar(&w.delta, "delta", 5, "size of the BETWEEN ranges of select_random_ranges")
	workload.ForVerbs(fs, []string{workload.VerbRun}, "range-size", "point-selects", "simple-ranges", "sum-ranges",
		"order-ranges", "distinct-ranges", "index-updates", "non-index-updates", "delete-inserts", "range-selects",
		"skip-trx", "random-points", "number-of-ranges", "delta")

	fs.StringVar(&w.randType, "rand-type", randSpecial, "distribution of ids (and of k at init): uniform, special, gaussian or pareto")
	fs.IntVar(&w.randSpecIter, "rand-spec-iter", 12, "uniform draws averaged by the gaussian and special distributions")
	fs.IntVar(&w.randSpecPct, "rand-spec-pct", 1, "special: the percentage of the range that is hot")
	fs.IntVar(&w.randSpecRes, "rand-spec-res", 75, "special: the percentage of draws that go to the hot part")
	fs.Float64Var(&w.randParetoH, "rand-pareto-h", 0.2, "pareto: the parameter h")
	workload.ForVerbs(fs, workload.InitVerbs, "rand-type", "rand-spec-iter", "rand-spec-pct", "rand-spec-res", "rand-pareto-h")
	w.flags = fs
	return w
}

// Meta implements workload.Workload.
func (w *Workload) Meta() workload.Meta {
	return Meta
}

// Flags implements workload.Flagser.
func (w *Workload) Flags() *pflag.FlagSet { return w.flags }

// ArgsUsage implements workload.Argser.
func (w *Workload) ArgsUsage() (string, string) {
	return "[TEST]", "TEST is one of sysbench's OLTP tests (oltp_read_write when not given):\n  " +
		strings.Join(Tests, "\n  ") + "\n" +
		"Options take sysbench's names with dashes (--table-size, --rand-type); on/off values are accepted."
}

// SetArgs implements workload.Argser: the test, oltp_read_write when none
// is given. The ".lua" of a script name is accepted.
func (w *Workload) SetArgs(args []string) error {
	switch len(args) {
	case 0:
		w.test = TestReadWrite
		return nil
	case 1:
	default:
		return fmt.Errorf("one test at most (got %s)", strings.Join(args, " "))
	}
	name := strings.TrimSuffix(args[0], ".lua")
	if !contains(Tests, name) {
		return fmt.Errorf("unknown test %q (available: %s)", args[0], strings.Join(Tests, ", "))
	}
	w.test = name
	return nil
}

// SetSeed implements workload.Seeder: the seed of the loaded data (and of
// oltp_insert's unique ids).
func (w *Workload) SetSeed(seed uint64) { w.seed = seed }

// Validate implements workload.Workload.
func (w *Workload) Validate() error {
	for _, c := range []struct {
		name string
		v    int
		min  int
	}{
		{"tables", w.tables, 1}, {"table-size", w.tableSize, 0}, {"range-size", w.rangeSize, 1},
		{"point-selects", w.pointSelects, 0}, {"simple-ranges", w.simpleRanges, 0}, {"sum-ranges", w.sumRanges, 0},
		{"order-ranges", w.orderRanges, 0}, {"distinct-ranges", w.distinctRanges, 0},
		{"index-updates", w.indexUpdates, 0}, {"non-index-updates", w.nonIndexUpdates, 0},
		{"delete-inserts", w.deleteInserts, 0}, {"random-points", w.randomPoints, 1},
		{"number-of-ranges", w.numberOfRanges, 1}, {"delta", w.delta, 0},
	} {
		if c.v < c.min {
			return fmt.Errorf("--%s must be at least %d (got %d)", c.name, c.min, c.v)
		}
	}
	if w.tableSize > math.MaxInt32 {
		return fmt.Errorf("--table-size must fit an integer column (at most %d, got %d)", math.MaxInt32, w.tableSize)
	}
	if w.test == TestSelectRandomPoints || w.test == TestSelectRandomRanges {
		if w.flags.Changed("tables") && w.tables != 1 {
			return fmt.Errorf("%s does not support --tables > 1 (it reads sbtest1 only)", w.test)
		}
	}
	d, err := newDistribution(w.randType, w.randSpecIter, w.randSpecPct, w.randSpecRes, w.randParetoH)
	if err != nil {
		return err
	}
	w.dist = d
	if w.queriesPerEvent().total() == 0 {
		return fmt.Errorf("%s with these options runs no statement", w.test)
	}
	return nil
}

// ValidateRun implements workload.RunValidator. select_random_points and
// select_random_ranges give each client its own part of the k range, as
// sysbench gives each thread one.
func (w *Workload) ValidateRun(clients int) error {
	w.clients = clients
	return nil
}

// TxTypes implements workload.Workload: one transaction type, the test (an
// event of sysbench).
func (w *Workload) TxTypes() []string { return []string{w.test} }

// Params implements workload.Flagser: the test and, after Prepare,
// the tables and rows the run uses.
func (w *Workload) Params() map[string]string {
	p := map[string]string{
		"test":       w.test,
		"tables":     strconv.Itoa(w.tables),
		"table-size": strconv.Itoa(w.tableSize),
		"rand-type":  w.randType,
		"queries":    w.queriesPerEvent().String(),
	}
	if len(w.notes) > 0 {
		p["note"] = strings.Join(w.notes, "; ")
	}
	return p
}

// tableName is sysbench's name of table n (1-based).
func tableName(n int) string { return "sbtest" + strconv.Itoa(n) }

// Prepare implements workload.Preparer. Like a sysbench run it needs the
// tables sbtest1..--tables; without --tables it uses sbtest1..N as far as
// they exist, and without --table-size it takes the rows of sbtest1 (a
// sysbench user passes the prepare's --tables and --table-size again).
// Tables sysbench created are only read, never marked or altered.
func (w *Workload) Prepare(ctx context.Context, conn pgtext.Querier) error {
	w.notes = nil
	want := w.tables
	if !w.flags.Changed("tables") {
		n, err := countTables(ctx, conn)
		if err != nil {
			return fmt.Errorf("sysbench: look for tables: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("database is not initialised for sysbench (table sbtest1 is missing): run `pgarena init sysbench` or `sysbench %s prepare` first", w.test)
		}
		want = n
	}
	names := make([]string, want)
	for i := range names {
		names[i] = tableName(i + 1)
	}
	missing, err := workload.FirstMissing(ctx, conn, names, false)
	if err != nil {
		return fmt.Errorf("sysbench: look for tables: %w", err)
	}
	if missing != "" {
		return fmt.Errorf("database is not initialised for sysbench --tables %d (table %s is missing): run `pgarena init sysbench --tables %d` first", want, missing, want)
	}
	if want != w.tables {
		w.notes = append(w.notes, fmt.Sprintf("tables: %d found in the database", want))
	}
	w.tables = want
	if w.test == TestSelectRandomPoints || w.test == TestSelectRandomRanges {
		w.tables = 1
	}
	w.sizeGiven = w.flags.Changed("table-size")
	var mark string
	if err := conn.QueryRow(ctx, "select coalesce(col_description('sbtest1'::regclass, 1), '')").Scan(&mark); err != nil {
		return fmt.Errorf("sysbench: read the mark of sbtest1: %w", err)
	}
	w.loaded = -1
	if n, err := strconv.ParseInt(strings.TrimPrefix(mark, loadMark), 10, 64); err == nil && strings.HasPrefix(mark, loadMark) {
		w.loaded = n
	}
	switch {
	case w.sizeGiven:
	case w.loaded > 0 && w.loaded <= math.MaxInt32:
		w.tableSize = int(w.loaded)
		w.notes = append(w.notes, fmt.Sprintf("table-size: %d, as loaded", w.loaded))
	default:
		var rows int64
		if err := conn.QueryRow(ctx, "select count(*) from sbtest1").Scan(&rows); err != nil {
			return fmt.Errorf("sysbench: count the rows of sbtest1: %w", err)
		}
		if rows > 0 && rows <= math.MaxInt32 {
			w.tableSize = int(rows)
			w.notes = append(w.notes, fmt.Sprintf("table-size: %d, the rows of sbtest1", rows))
		}
	}
	return nil
}

// countTables returns N when sbtest1..sbtestN are visible tables (and
// sbtestN+1 is not).
func countTables(ctx context.Context, conn pgtext.Querier) (int, error) {
	rows, err := conn.Query(ctx, `select substr(relname, 7)::int from pg_class
		where relname ~ '^sbtest[1-9][0-9]{0,8}$' and relkind in ('r', 'p') and pg_table_is_visible(oid)`)
	if err != nil {
		return 0, err
	}
	nums, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return 0, err
	}
	have := make(map[int32]bool, len(nums))
	for _, n := range nums {
		have[n] = true
	}
	n := 0
	for have[int32(n+1)] {
		n++
	}
	return n, nil
}

// SetSegment implements workload.Segmenter: segment index of count takes
// every count-th of oltp_insert's unique ids, so segments never insert the
// same id.
func (w *Workload) SetSegment(index, count int) { w.seg, w.segs = index, count }

// NewWorker implements workload.Workload.
func (w *Workload) NewWorker(id int, rng *rand.Rand) workload.Worker {
	if w.dist.kind == "" {
		w.dist, _ = newDistribution(w.randType, w.randSpecIter, w.randSpecPct, w.randSpecRes, w.randParetoH)
	}
	if w.unique == nil {
		w.unique = newUniqueSeq(w.seed, w.seg, w.segs)
	}
	return newWorker(w, id, rng)
}

// Snapshot implements workload.FigureReporter: the figures come from the
// clients' committed counts alone.
func (w *Workload) Snapshot(context.Context, pgtext.Querier) (map[string]float64, error) {
	return map[string]float64{}, nil
}

// Figures implements workload.FigureReporter: queries per second as
// sysbench counts them (reads, writes and other: BEGIN and COMMIT), for
// the committed transactions, each of which runs a fixed number of
// statements. Like sysbench's, they share tps's count and time (and its
// rounding): qps is tps times the queries per transaction.
func (w *Workload) Figures(win workload.FigureWindow) []workload.Figure {
	measured, committed := win.Measured, win.Counted
	if measured <= 0 {
		return nil
	}
	q := w.queriesPerEvent()
	n, secs := committed[w.test], measured.Seconds()
	rate := func(per int) float64 { return math.Round(float64(n*int64(per))/secs*1000) / 1000 }
	return []workload.Figure{
		{Name: "qps", Value: rate(q.total()), Unit: "queries/s",
			Note: fmt.Sprintf("sysbench's queries: %s per committed transaction", q)},
		{Name: "reads", Value: rate(q.reads), Unit: "queries/s"},
		{Name: "writes", Value: rate(q.writes), Unit: "queries/s"},
	}
}

// ProgressFigure implements workload.ProgressFigurer: queries per second.
func (w *Workload) ProgressFigure(committed map[string]int64, span time.Duration) workload.Figure {
	f := workload.Figure{Name: "qps", Unit: "queries/s"}
	if span > 0 {
		f.Value = math.Round(float64(committed[w.test]*int64(w.queriesPerEvent().total())) / span.Seconds())
	}
	return f
}

// queries counts the statements of one event as sysbench does: reads
// (SELECT), writes (UPDATE, DELETE, INSERT) and other (BEGIN, COMMIT).
type queries struct{ reads, writes, other int }

func (q queries) total() int { return q.reads + q.writes + q.other }

func (q queries) String() string {
	return fmt.Sprintf("%d (%d reads, %d writes, %d other)", q.total(), q.reads, q.writes, q.other)
}

// queriesPerEvent is what one event of the test sends.
func (w *Workload) queriesPerEvent() queries {
	var q queries
	trx := func() {
		if !w.skipTrx {
			q.other += 2
		}
	}
	reads := func() {
		q.reads += w.pointSelects
		if w.rangeSelects {
			q.reads += w.simpleRanges + w.sumRanges + w.orderRanges + w.distinctRanges
		}
	}
	writes := func() { q.writes += w.indexUpdates + w.nonIndexUpdates + 2*w.deleteInserts }
	switch w.test {
	case TestReadWrite:
		trx()
		reads()
		writes()
	case TestReadOnly:
		trx()
		reads()
	case TestWriteOnly:
		trx()
		writes()
	case TestUpdateIndex:
		q.writes = w.indexUpdates
	case TestUpdateNonIndex:
		q.writes = w.nonIndexUpdates
	case TestInsert, TestDelete:
		q.writes = 1
	default: // point select, random points, random ranges
		q.reads = 1
	}
	return q
}

// usesTrx reports whether the test's events are transactions with BEGIN
// and COMMIT.
func (w *Workload) usesTrx() bool {
	return !w.skipTrx && (w.test == TestReadWrite || w.test == TestReadOnly || w.test == TestWriteOnly)
}

// classes lists the statements the test's events send (on any table; the
// select_random_* ones on sbtest1 only, which is then the only table).
func (w *Workload) classes() []class {
	reads := []class{clPointSelect}
	if w.rangeSelects {
		reads = append(reads, clSimpleRange, clSumRange, clOrderRange, clDistinctRange)
	}
	writes := []class{clIndexUpdate, clNonIndexUpdate, clDelete, clInsert}
	switch w.test {
	case TestReadWrite:
		return append(reads, writes...)
	case TestReadOnly:
		return reads
	case TestWriteOnly:
		return writes
	case TestPointSelect:
		return []class{clPointSelect}
	case TestUpdateIndex:
		return []class{clIndexUpdate}
	case TestUpdateNonIndex:
		return []class{clNonIndexUpdate}
	case TestDelete:
		return []class{clDelete}
	case TestInsert:
		if w.autoInc {
			return []class{clInsertAuto}
		}
		return []class{clInsert}
	case TestSelectRandomPoints:
		return []class{clRandomPoints}
	default:
		return []class{clRandomRanges}
	}
}

// onOff defines a boolean flag that also takes sysbench's on and off
// (--skip-trx, --skip-trx=on, --skip-trx=off, or true/false).
func onOff(fs *pflag.FlagSet, p *bool, name string, value bool, usage string) {
	*p = value
	f := fs.VarPF((*onOffValue)(p), name, "", usage)
	f.NoOptDefVal = "on"
}

type onOffValue bool

func (b *onOffValue) String() string {
	if *b {
		return "on"
	}
	return "off"
}

func (b *onOffValue) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "true", "1", "yes":
		*b = true
	case "off", "false", "0", "no":
		*b = false
	default:
		return fmt.Errorf("want on or off, got %q", s)
	}
	return nil
}

func (b *onOffValue) Type() string { return "on|off" }
