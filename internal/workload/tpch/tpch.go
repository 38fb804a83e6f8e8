// Package tpch is a TPC-H-derived decision-support benchmark (TPC-H
// 3.0.1): the eight tables of Clause 1.4 filled with dbgen's data
// (internal/workload/tpch/dbgen, byte-identical to TPC-H's dbgen), the 22
// queries with qgen's substitution parameters (internal/workload/tpch/qgen)
// and the refresh functions RF1 and RF2 (Clause 2.5).
//
// Each query is a transaction type (q1..q22; RF1 and RF2 are rf1, rf2), so
// the driver times each and the summary's per-type table is the per-query
// table. Run modes:
//
//   - --power: the power test (Clause 5.3.3): one stream running RF1, the
//     22 queries in stream 0's order, RF2; figure power@size.
//   - --throughput --streams S: the throughput test (Clause 5.3.4): S
//     query streams (client group "streams"), each the 22 queries once in
//     its own order, and one refresh stream (group "refresh") running S
//     RF1/RF2 pairs; figure throughput@size.
//   - --power --throughput: both in one run, the throughput test's groups
//     starting when the power stream has finished (workload.Part.After,
//     Clause 5.3.2's order); figure QphH@size = √(power@size ×
//     throughput@size) (Clause 5.4.3).
//   - --queries 1,6,14 --repeat 5: those queries, repeated, by each of -c
//     clients (per-query min/median/max in the summary).
//   - default: -c clients, each a stream looping over the 22 queries in
//     its own order until -T, as chbench's analytic clients.
//
// All but the default end by themselves (workload.Finisher): each stream runs
// its list once and its Do returns workload.ErrStopped after it.
//
// Refresh sets (dbgen -U) are used once: the state table tpch_state holds
// the next set of RF1 and of RF2, claimed in the refresh's own transaction,
// so repeated runs never insert a key twice. The figures are TPC-H-derived,
// not audited.
package tpch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/analytic"
	"github.com/pgarena/pgarena/internal/workload/tpch/dbgen"
	"github.com/pgarena/pgarena/internal/workload/tpch/qgen"
)

// Meta describes tpch to the registry (internal/workload/all registers it).
var Meta = workload.Meta{
	Name:        "tpch",
	Description: "TPC-H-derived: dbgen's data, the 22 queries, RF1/RF2; power, throughput (not audited)",
	New:         func() workload.Workload { return New() },
	TestFlags:   []string{"--scale", "0.01"},
}

// Client groups of the power and throughput tests.
const (
	GroupPower   = "power"
	GroupStreams = "streams"
	GroupRefresh = "refresh"
)

// mode is what a run does (--power and --throughput may be given together:
// mode is then modePower, and both flags say what runs).
type mode int

const (
	modeLoop mode = iota
	modePower
	modeThroughput
	modeQueries
)

// Workload is the tpch benchmark. Use New (or the registry).
type Workload struct {
	scale       float64
	power       bool
	throughput  bool
	streams     int
	queryList   string
	queries     []int // --queries, 1-based
	repeat      int
	answers     bool
	explain     bool
	clients     int // of a one-group run (ValidateRun)
	citus       bool
	citusLayout string
	shardCount  int
	seed        uint64
	flags       *pflag.FlagSet

	// segmented: the run is one of several processes' (--segment, --agents)
	segmented bool

	// sliceI of sliceN: the slice loaded (slice.go); sliceN 0: all
	sliceI, sliceN int

	// read by Prepare from the state table
	rf1Next, rf2Next int
	prepared         bool

	genMu sync.Mutex
	gen   *dbgen.Generator // of scale, made on first use

	refreshMu sync.Mutex
	refresh   map[int]refreshSet // RF1's data by set, generated ahead (refresh.go)
}

// generator is the data generator of the workload's scale (shared by the
// workers: dbgen.Generator is safe for concurrent use).
func (w *Workload) generator() *dbgen.Generator {
	w.genMu.Lock()
	defer w.genMu.Unlock()
	if w.gen == nil || w.gen.Scale() != w.scale {
		w.gen = dbgen.New(w.scale)
	}
	return w.gen
}

// New returns a tpch workload with the default parameters.
func New() *Workload {
	w := &Workload{scale: 1, streams: 2, repeat: 1, shardCount: 32, seed: 1, citusLayout: layoutReference}
	fs := pflag.NewFlagSet("tpch", pflag.ContinueOnError)
	fs.Float64VarP(&w.scale, "scale", "s", 1, "scale factor (SF): 1 is about 1 GB of data (lineitem 6 million rows); fractions for tests (0.01)")
	fs.BoolVar(&w.power, "power", false, "the power test: RF1, the 22 queries in stream 0's order, RF2 (one stream); the run ends when it has (no -T needed); with --throughput, both tests, then QphH@size")
	fs.BoolVar(&w.throughput, "throughput", false, "the throughput test: --streams query streams, each the 22 queries once in its own order, and a refresh stream of as many RF1/RF2 pairs; the run ends when all have")
	fs.IntVar(&w.streams, "streams", 2, "query streams of --throughput (the spec's minimum is 2 at SF 1, 3 at 10, 4 at 30)")
	fs.StringVar(&w.queryList, "queries", "", "run only these queries (1,6,14), --repeat times each per client, then end")
	fs.IntVar(&w.repeat, "repeat", 1, "with --queries: how many times each client runs the list")
	fs.BoolVar(&w.explain, "explain-slowest", false, "after the run, save EXPLAIN (ANALYZE, BUFFERS) of its slowest query (with the parameters of the stream it ran in, named in the file) with the run, in explain-slowest.txt")
	fs.BoolVar(&w.answers, "answers", false, "check the 22 queries' answers with the validation parameters against the answer set of the scale")
	fs.BoolVar(&w.citus, "citus", false, "distribute the tables on a Citus coordinator (see --citus-layout); automatic when the extension is there")
	fs.StringVar(&w.citusLayout, "citus-layout", layoutReference, "with Citus: reference (lineitem/orders distributed by orderkey, the other six reference tables: all 22 queries run) or distributed (part/partsupp by partkey and customer by custkey too: 11 queries fail, 5 with citus.enable_repartition_joins=on)")
	fs.IntVar(&w.shardCount, "shard-count", 32, "with Citus: shards of the distributed tables")
	workload.ForVerbs(fs, workload.InitVerbs, "scale", "citus", "citus-layout", "shard-count")
	workload.ForVerbs(fs, []string{workload.VerbRun}, "power", "throughput", "streams", "queries", "repeat", "explain-slowest")
	workload.ForVerbs(fs, []string{workload.VerbCheck}, "answers")
	w.flags = fs
	return w
}

// Meta implements workload.Workload.
func (w *Workload) Meta() workload.Meta {
	return Meta
}

// Flags implements workload.Flagser.
func (w *Workload) Flags() *pflag.FlagSet { return w.flags }

// SetSeed implements workload.Seeder: the seed of the queries' parameters
// (the data is dbgen's, which has none).
func (w *Workload) SetSeed(seed uint64) { w.seed = seed }

// Validate implements workload.Workload.
func (w *Workload) Validate() error {
	switch {
	case w.scale < 0.01 || w.scale > 100000:
		return fmt.Errorf("--scale must be between 0.01 and 100000 (got %g)", w.scale)
	case (w.power || w.throughput) && w.queryList != "":
		return errors.New("--queries runs a subset: leave out --power and --throughput")
	case w.streams < 1:
		return fmt.Errorf("--streams must be at least 1 (got %d)", w.streams)
	case w.repeat < 1:
		return fmt.Errorf("--repeat must be at least 1 (got %d)", w.repeat)
	case w.flags.Changed("repeat") && w.queryList == "":
		return errors.New("--repeat repeats --queries: give --queries too")
	case w.flags.Changed("streams") && !w.throughput:
		return errors.New("--streams is the throughput test's: give --throughput too")
	case w.shardCount < 1:
		return fmt.Errorf("--shard-count must be at least 1 (got %d)", w.shardCount)
	case w.citusLayout != layoutReference && w.citusLayout != layoutDistributed:
		return fmt.Errorf("--citus-layout must be %s or %s (got %q)", layoutReference, layoutDistributed, w.citusLayout)
	}
	w.queries = nil
	if w.queryList != "" {
		for _, f := range strings.Split(w.queryList, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 22 {
				return fmt.Errorf("--queries: %q is not a query number 1..22", f)
			}
			w.queries = append(w.queries, n)
		}
	}
	return nil
}

func (w *Workload) mode() mode {
	switch {
	case w.power:
		return modePower
	case w.throughput:
		return modeThroughput
	case len(w.queries) > 0:
		return modeQueries
	}
	return modeLoop
}

// Params implements workload.Flagser.
func (w *Workload) Params() map[string]string {
	p := map[string]string{"scale": strconv.FormatFloat(w.scale, 'g', -1, 64)}
	switch w.mode() {
	case modePower, modeThroughput:
		var tests []string
		if w.power {
			tests = append(tests, "power")
		}
		if w.throughput {
			tests = append(tests, "throughput")
			p["streams"] = strconv.Itoa(w.streams)
		}
		p["mode"] = strings.Join(tests, "+")
	case modeQueries:
		p["mode"], p["queries"], p["repeat"] = "queries", w.queryList, strconv.Itoa(w.repeat)
	default:
		p["mode"] = "loop"
	}
	if w.prepared {
		p["rf1_next"], p["rf2_next"] = strconv.Itoa(w.rf1Next), strconv.Itoa(w.rf2Next)
	}
	if w.citus {
		p["citus_forms"] = citusFormNames() // qgen.CitusSQL's rewrites ran
	}
	// the substitution parameters of the power and throughput tests'
	// streams, as the queries have them
	if w.power {
		p["params_stream0"] = w.streamParams(0)
	}
	for s := 1; w.throughput && s <= w.streams; s++ {
		p["params_stream"+strconv.Itoa(s)] = w.streamParams(s)
	}
	return p
}

// streamParams is stream s's substitution parameters in its order:
// "q14(1995-03-01) q2(15, BRASS, EUROPE) ...".
func (w *Workload) streamParams(s int) string {
	var b strings.Builder
	for i, q := range qgen.Stream(s, int64(w.seed), w.scale) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "q%d(%s)", q.Number, strings.Join(q.Params, ", "))
	}
	return b.String()
}

// Tables implements workload.Workload.
func (w *Workload) Tables() []workload.Table {
	return w.narrow(tables(w.generator(), w.citus, w.citusLayout == layoutReference))
}

// queryNames are q1..q22; TxTypes are they, then rf1 and rf2.
var queryNames = lazy.Value[[]string]{New: buildQueryNames}

func buildQueryNames() []string {
	out := make([]string, 22)
	for i := range out {
		out[i] = "q" + strconv.Itoa(i+1)
	}
	return out
}

const (
	txRF1 = workload.TxType(22)
	txRF2 = workload.TxType(23)
)

// TxTypes implements workload.Workload: q1..q22, rf1 and rf2; in loop
// mode the queries only; with --queries those queries only, in their
// order.
func (w *Workload) TxTypes() []string {
	switch w.mode() {
	case modeLoop:
		return slices.Clone(queryNames.Get())
	case modeQueries:
		var out []string
		for _, n := range w.queries {
			if !slices.Contains(out, queryNames.Get()[n-1]) {
				out = append(out, queryNames.Get()[n-1])
			}
		}
		return out
	}
	return append(slices.Clone(queryNames.Get()), "rf1", "rf2")
}

// streamSet is query stream s's queries with its parameters, as a set in
// query-number order (TxType n-1 is qn), and the stream's order.
func (w *Workload) streamSet(s int) (analytic.Set, []int) {
	set := make(analytic.Set, 22)
	var order []int
	for _, q := range qgen.Stream(s, int64(w.seed), w.scale) {
		set[q.Number-1] = analytic.Query{Name: queryNames.Get()[q.Number-1], SQL: w.querySQL(q)}
		order = append(order, q.Number-1)
	}
	return set, order
}

// NewWorker implements workload.Workload for a run of one client group:
// in loop and --queries modes client id runs stream id+1; as one group,
// the power test is client 0's and the throughput test's refresh stream is
// client --streams (the CLI runs these as client groups, Groups).
func (w *Workload) NewWorker(id int, _ *rand.Rand) workload.Worker {
	switch w.mode() {
	case modePower:
		if id == 0 {
			return w.powerWorker()
		}
	case modeThroughput:
		if id == w.streams {
			return w.refreshWorker(txRF1, txRF2)
		}
		return w.streamWorker(id+1, 1)
	case modeQueries:
		// the subset's queries with stream id+1's parameters, as
		// TxTypes names them
		all, _ := w.streamSet(id + 1)
		types := w.TxTypes()
		set := make(analytic.Set, len(types))
		for i, name := range types {
			set[i] = all[slices.Index(queryNames.Get(), name)]
		}
		order := make([]int, len(w.queries))
		for i, n := range w.queries {
			order[i] = slices.Index(types, queryNames.Get()[n-1])
		}
		return analytic.NewOrderedStream(set, 0, order, w.repeat)
	}
	return w.streamWorker(id+1, 0)
}

// streamWorker is query stream s, rounds times over the 22 queries (0:
// until the run ends).
func (w *Workload) streamWorker(s, rounds int) *analytic.Stream {
	set, order := w.streamSet(s)
	return analytic.NewOrderedStream(set, 0, order, rounds)
}

// Transactions implements workload.Finisher: the longest list of the
// power and throughput tests and of --queries; 0 in loop mode.
func (w *Workload) Transactions() int {
	n := 0
	if w.power {
		n = 24
	}
	if w.throughput {
		n = max(n, 22, 2*w.streams)
	}
	if w.mode() == modeQueries {
		n = len(w.queries) * w.repeat
	}
	return n
}

// Groups implements workload.Grouper: the power test's one stream, the
// throughput test's query streams and refresh stream, or both tests, the
// throughput test after the power test (Clause 5.3.2; workload.Part.After);
// none otherwise (the run is then one group of -c clients).
func (w *Workload) Groups() []workload.Part {
	var parts []workload.Part
	after, first := "", 0 // first: the whole-run id of the first query stream
	if w.power {
		parts = append(parts, workload.Part{Name: GroupPower, Clients: 1, Workload: &part{w, w.TxTypes(),
			func(int, *rand.Rand) workload.Worker { return w.powerWorker() }}})
		after, first = GroupPower, 1
	}
	if w.throughput {
		parts = append(parts,
			workload.Part{Name: GroupStreams, Clients: w.streams, After: after, Workload: &part{w, slices.Clone(queryNames.Get()),
				func(id int, _ *rand.Rand) workload.Worker { return w.streamWorker(id-first+1, 1) }}},
			workload.Part{Name: GroupRefresh, Clients: 1, After: after, Workload: &part{w, []string{"rf1", "rf2"},
				func(int, *rand.Rand) workload.Worker { return w.refreshWorker(0, 1) }}})
	}
	return parts
}

// part is one client group's view of the workload: its own transaction
// types and workers; the rest (tables, checks, figures) is the whole's.
type part struct {
	*Workload
	types     []string
	newWorker func(id int, rng *rand.Rand) workload.Worker
}

func (p *part) TxTypes() []string                                { return p.types }
func (p *part) NewWorker(id int, rng *rand.Rand) workload.Worker { return p.newWorker(id, rng) }
func (p *part) Groups() []workload.Part                          { return nil }
func (p *part) ValidateRun(int) error                            { return nil } // clients of the whole's groups are its own

// SetSegment implements workload.Segmenter: the power and throughput
// tests are one process's (Prepare refuses them under --segment).
func (w *Workload) SetSegment(_, _ int) { w.segmented = true }

// Prepare implements workload.Preparer: the scale and the next refresh
// sets, from the state table.
func (w *Workload) Prepare(ctx context.Context, q pgtext.Querier) error {
	if w.segmented && (w.power || w.throughput) {
		return &workload.InputError{Msg: "tpch --power and --throughput run in one process (their streams follow each other): leave out --segment and --agents"}
	}
	conn, err := workload.PgxConn(q)
	if err != nil {
		return err
	}
	missing, err := workload.FirstMissing(ctx, conn, append(tableNames(), stateTable), false)
	if err != nil {
		return fmt.Errorf("tpch: look for tables: %w", err)
	}
	if missing != "" {
		return &workload.InputError{Msg: fmt.Sprintf("database is not initialised for tpch (table %s is missing): run `pgarena init tpch --scale N` first", missing)}
	}
	var sf float64
	if err := conn.QueryRow(ctx, "select scale, rf1_next, rf2_next from "+stateTable).Scan(&sf, &w.rf1Next, &w.rf2Next); err != nil {
		return fmt.Errorf("tpch: read %s: %w", stateTable, err)
	}
	if w.flags.Changed("scale") && sf != w.scale {
		return &workload.InputError{Msg: fmt.Sprintf("the database holds tpch at scale %g, not --scale %g: leave out --scale or init again", sf, w.scale)}
	}
	w.scale, w.prepared = sf, true
	if err := w.prepareCitus(ctx, conn); err != nil {
		return err
	}
	if err := w.pregenerate(w.rf1Next); err != nil {
		return &workload.InputError{Msg: fmt.Sprintf("tpch: %v: the refresh sets of this load are used up, init again", err)}
	}
	return nil
}

// tableNames are the eight tables' names.
func tableNames() []string {
	out := make([]string, len(dbgen.Tables))
	for i, t := range dbgen.Tables {
		out[i] = t.String()
	}
	return out
}

// ExplainSlowest implements workload.Explainer: --explain-slowest.
func (w *Workload) ExplainSlowest() bool { return w.explain }

// Explain implements workload.Explainer: EXPLAIN (ANALYZE, BUFFERS) of
// query txType ("q5", "streams/q5") with the parameters of the stream it
// ran in (explainStream); "" for the refresh functions.
func (w *Workload) Explain(ctx context.Context, q pgtext.Querier, txType string) (string, error) {
	conn, err := workload.PgxConn(q)
	if err != nil {
		return "", err
	}
	n := slices.Index(queryNames.Get(), analytic.BaseName(txType)) + 1
	if n == 0 {
		return "", nil
	}
	stream, which := w.explainStream(txType)
	var sql string
	for _, q := range qgen.Stream(stream, int64(w.seed), w.scale) {
		if q.Number == n {
			sql = w.querySQL(q)
		}
	}
	rows, err := textRows(ctx, conn, "explain (analyze, buffers) "+sql)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- q%d with %s (seed %d, scale %g):\n%s\n", n, which, w.seed, w.scale, sql)
	for _, r := range rows {
		b.WriteString(strings.Join(r, " ") + "\n")
	}
	return b.String(), nil
}

// explainStream is the query stream whose parameters Explain uses for
// txType, and the words saying so: the power test's queries ran in stream
// 0; the throughput test's in streams 1..S and a one-group run's in
// streams 1..clients (client i runs stream i+1), each with its own
// parameters: then stream 1's, and the words say it ran in several.
func (w *Workload) explainStream(txType string) (int, string) {
	group, _, grouped := strings.Cut(txType, "/")
	n := max(w.clients, 1)
	switch {
	case grouped && group == GroupPower:
		return 0, "stream 0's parameters (the power test's)"
	case grouped && group == GroupStreams:
		n = w.streams
		if n > 1 {
			return 1, fmt.Sprintf("stream 1's parameters (it ran in the throughput test's streams 1 to %d, each with its own)", n)
		}
		return 1, "stream 1's parameters (the throughput test's one stream)"
	case n > 1:
		return 1, fmt.Sprintf("stream 1's parameters, client 0's (it ran in the streams 1 to %d of the %d clients, each with its own)", n, n)
	}
	return 1, "stream 1's parameters (the one client's)"
}

// ValidateRun implements workload.RunValidator: it refuses nothing and
// keeps the client count of a one-group run (whose client i runs stream
// i+1), for explainStream.
func (w *Workload) ValidateRun(clients int) error {
	w.clients = clients
	return nil
}
