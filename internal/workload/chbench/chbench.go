// Package chbench is the CH-benCHmark (Cole et al., "The mixed workload
// CH-benCHmark", DBTest 2011): TPC-C's schema and transactions, run by
// transactional clients, and TPC-H's 22 queries rewritten over that
// schema, run by analytic clients at the same time on the same data.
//
// The TPC-C half is internal/workload/tpcc itself (its tables, data,
// transactions, checks and NOPM), not a copy. The paper adds three TPC-H
// tables (schema.go): supplier (10,000 rows), nation (62) and region (5).
// They join TPC-C's tables through computed keys:
//
//   - a stock row's supplier is mod(s_w_id * s_i_id, 10000) = su_suppkey;
//   - a customer's nation is the ASCII code of the first letter of
//     c_state: ascii(substr(c_state, 1, 1)) = n_nationkey (nation keys are
//     the codes of '0'-'9', 'A'-'Z' and 'a'-'z').
//
// The queries (queries.go) are each a transaction type, q1..q22, so the
// driver times each and the summary's per-type table is the per-query
// table. `pgarena run chbench` runs two client groups on one timeline
// (workload.Grouper): "oltp" (--oltp-clients, the TPC-C mix) and "olap"
// (--olap-clients, each client a stream looping over q1..q22 in order).
// The figures of merit are TPC-C's NOPM (from the database, as tpcc reads
// it) and QphH, analytic queries completed per hour (analytic.QphH).
//
// Run as one client group (the session API without Grouper, the
// every-workload test), odd client ids are analytic streams and even ones
// TPC-C terminals.
package chbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/analytic"
	"github.com/pgarena/pgarena/internal/workload/tpcc"
)

// Meta describes chbench to the registry (internal/workload/all registers it).
var Meta = workload.Meta{
	Name:        "chbench",
	Description: "CH-benCHmark: TPC-C transactions and 22 TPC-H-derived queries at once (NOPM and QphH)",
	New:         func() workload.Workload { return New() },
	TestFlags:   []string{"--warehouses", "1"},
	// As tpcc; the queries are prepared once per connection, then
	// reused every round.
	QueryMode: "prepared",
}

// Client groups of a run (workload.Grouper).
const (
	GroupOLTP = "oltp"
	GroupOLAP = "olap"
)

// Workload is the chbench benchmark. Use New (or the registry).
type Workload struct {
	tpcc        *tpcc.Workload
	seed        uint64
	oltpClients int
	olapClients int
	flags       *pflag.FlagSet

	// citus: the tables are Citus distributed tables (Prepare): the
	// analytic clients' connections get citusOLAPSettings.
	citus bool
}

// citusOLAPSettings are the session settings of the analytic clients on
// Citus. Q7, Q8, Q9, Q15 and Q20 join stock and order_line on the supply
// warehouse or the item alone, not on the warehouse column both are
// distributed by; Citus runs such joins only as repartition joins, off by
// default ("the query contains a join that requires repartitioning").
// citus-benchmark's CH-benCHmark sets the same for its analytic
// connections. The transactional clients keep the defaults.
var citusOLAPSettings = [][2]string{{"citus.enable_repartition_joins", "on"}}

// tpccFlags are the tpcc flags chbench takes (not --warehouse-range: the
// extra tables are not split into slices).
var tpccFlags = []string{"warehouses", "all-warehouses", "stored-procs", "citus", "shard-count", "fillfactor", "keying-thinking"}

// New returns a chbench workload with the default parameters.
func New() *Workload {
	w := &Workload{tpcc: tpcc.New(), seed: 1}
	fs := pflag.NewFlagSet("chbench", pflag.ContinueOnError)
	for _, name := range tpccFlags {
		fs.AddFlag(w.tpcc.Flags().Lookup(name))
	}
	fs.IntVar(&w.oltpClients, "oltp-clients", 8, "transactional clients, running the TPC-C mix (client group \"oltp\"; in place of -c)")
	fs.IntVar(&w.olapClients, "olap-clients", 2, "analytic clients, each a stream running q1..q22 in order, again and again (client group \"olap\")")
	workload.ForVerbs(fs, []string{workload.VerbRun}, "oltp-clients", "olap-clients")
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
	if err := w.tpcc.Validate(); err != nil {
		return err
	}
	switch {
	case w.oltpClients < 0 || w.olapClients < 0:
		return fmt.Errorf("--oltp-clients and --olap-clients must not be negative (got %d and %d)", w.oltpClients, w.olapClients)
	case w.oltpClients+w.olapClients == 0:
		return errors.New("--oltp-clients and --olap-clients are both 0: give at least one client")
	}
	return nil
}

// Tables implements workload.Workload: TPC-C's tables, then supplier,
// nation and region.
func (w *Workload) Tables() []workload.Table {
	return append(w.tpcc.Tables(), extraTables(w.seed)...)
}

// oltpTypes is the number of TPC-C transaction types; the queries follow
// them in TxTypes.
func (w *Workload) oltpTypes() int { return len(w.tpcc.TxTypes()) }

// TxTypes implements workload.Workload: TPC-C's five types, then q1..q22.
func (w *Workload) TxTypes() []string {
	return append(append([]string{}, w.tpcc.TxTypes()...), Queries().Names()...)
}

// NewWorker implements workload.Workload for a run of one client group:
// odd client ids are analytic streams, even ones TPC-C terminals (their
// home warehouses spread as tpcc spreads ids 0, 1, 2, ...).
func (w *Workload) NewWorker(id int, rng *rand.Rand) workload.Worker {
	if id%2 == 1 {
		return analytic.NewStream(Queries(), workload.TxType(w.oltpTypes()), 0)
	}
	return w.tpcc.NewWorker(id/2, rng)
}

// Groups implements workload.Grouper: the transactional clients and the
// analytic streams (a group with no clients is left out).
func (w *Workload) Groups() []workload.Part {
	var parts []workload.Part
	if w.oltpClients > 0 {
		parts = append(parts, workload.Part{Name: GroupOLTP, Clients: w.oltpClients, Workload: &part{w, w.tpcc.TxTypes(),
			func(id int, rng *rand.Rand) workload.Worker { return w.tpcc.NewWorker(id, rng) }, false}})
	}
	if w.olapClients > 0 {
		parts = append(parts, workload.Part{Name: GroupOLAP, Clients: w.olapClients, Workload: &part{w, Queries().Names(),
			func(int, *rand.Rand) workload.Worker { return analytic.NewStream(Queries(), 0, 0) }, true}})
	}
	return parts
}

// part is one client group's view of the workload: its own transaction
// types and workers; every other method (tables, checks, figures) is the
// whole workload's.
type part struct {
	*Workload
	types     []string
	newWorker func(id int, rng *rand.Rand) workload.Worker
	analytic  bool // the streams: no terminals-per-warehouse limit
}

// TxTypes, NewWorker: the group's own; Groups: a part is not split again.
func (p *part) TxTypes() []string                                { return p.types }
func (p *part) NewWorker(id int, rng *rand.Rand) workload.Worker { return p.newWorker(id, rng) }
func (p *part) Groups() []workload.Part                          { return nil }

// SetupConn implements workload.ConnSetup for the analytic group: on
// Citus, citusOLAPSettings on each of its connections.
func (p *part) SetupConn(ctx context.Context, conn *pgx.Conn) error {
	if !p.analytic || !p.citus {
		return nil
	}
	for _, kv := range citusOLAPSettings {
		if _, err := conn.Exec(ctx, "select set_config($1, $2, false)", kv[0], kv[1]); err != nil {
			return fmt.Errorf("chbench: set %s for the analytic clients: %w", kv[0], err)
		}
	}
	return nil
}

// ValidateRun implements workload.RunValidator: tpcc's limit for the
// transactional clients; any number of analytic streams.
func (p *part) ValidateRun(clients int) error {
	if p.analytic {
		return nil
	}
	return p.Workload.ValidateRun(clients)
}

// SetSeed implements workload.Seeder: the seed of TPC-C's data and
// constants and of the extra tables.
func (w *Workload) SetSeed(seed uint64) {
	w.seed = seed
	w.tpcc.SetSeed(seed)
}

// Params implements workload.Flagser: tpcc's, and the client groups.
func (w *Workload) Params() map[string]string {
	p := w.tpcc.Params()
	p["oltp_clients"] = strconv.Itoa(w.oltpClients)
	p["olap_clients"] = strconv.Itoa(w.olapClients)
	if w.citus {
		var set []string
		for _, kv := range citusOLAPSettings {
			set = append(set, kv[0]+"="+kv[1])
		}
		p["olap_session_citus"] = strings.Join(set, " ")
	}
	return p
}

// extraNames are the tables chbench adds to TPC-C's.
var extraNames = []string{"supplier", "nation", "region"}

// Prepare implements workload.Preparer: tpcc's (warehouses, constants),
// and the extra tables must exist.
func (w *Workload) Prepare(ctx context.Context, conn pgtext.Querier) error {
	missing, err := workload.FirstMissing(ctx, conn, extraNames, false)
	if err != nil {
		return fmt.Errorf("chbench: look for tables: %w", err)
	}
	if missing != "" {
		return fmt.Errorf("database is not initialised for chbench (table %s is missing): run `pgarena init chbench` first", missing)
	}
	if w.citus, err = workload.CitusDistributed(ctx, conn, "order_line"); err != nil {
		return fmt.Errorf("chbench: %w", err)
	}
	return w.tpcc.Prepare(ctx, conn)
}

// ValidateRun implements workload.RunValidator: tpcc's limit of 10
// terminals per warehouse, for the transactional clients.
func (w *Workload) ValidateRun(clients int) error { return w.tpcc.ValidateRun(clients) }

// PrepareInit implements workload.InitPreparer: Citus, as tpcc.
func (w *Workload) PrepareInit(ctx context.Context, conn *pgx.Conn) error {
	return w.tpcc.PrepareInit(ctx, conn)
}

// Distribute implements workload.Distributor: on Citus, TPC-C's tables as
// tpcc distributes them, and supplier, nation and region as reference
// tables (small, read by every query, joined to any shard).
func (w *Workload) Distribute() []string {
	stmts := w.tpcc.Distribute()
	if len(stmts) == 0 {
		return nil
	}
	for _, t := range extraNames {
		stmts = append(stmts, "select create_reference_table('"+t+"')")
	}
	return stmts
}

// Functions implements workload.Functioner: tpcc's stored procedures.
func (w *Workload) Functions() []workload.Function { return w.tpcc.Functions() }

// FunctionsOnly implements workload.Functioner: tpcc's (chbench does not
// take --functions-only, so false).
func (w *Workload) FunctionsOnly() bool { return w.tpcc.FunctionsOnly() }

// Check implements workload.Checker: TPC-C's consistency conditions, and
// the extra tables hold their rows (they are never written).
func (w *Workload) Check(ctx context.Context, conn pgtext.Querier) error {
	if err := w.tpcc.Check(ctx, conn); err != nil {
		return err
	}
	for _, t := range extraTables(w.seed) {
		var n int64
		if err := conn.QueryRow(ctx, "select count(*) from "+t.Name).Scan(&n); err != nil {
			return fmt.Errorf("chbench check: %s: %w", t.Name, err)
		}
		if n != t.Rows.Rows {
			return fmt.Errorf("chbench check: table %s holds %d rows, want %d", t.Name, n, t.Rows.Rows)
		}
	}
	return nil
}

// Snapshot implements workload.FigureReporter: tpcc's counters.
func (w *Workload) Snapshot(ctx context.Context, conn pgtext.Querier) (map[string]float64, error) {
	return w.tpcc.Snapshot(ctx, conn)
}

// SetSegment implements workload.Segmenter for tpcc's figures.
func (w *Workload) SetSegment(index, count int) { w.tpcc.SetSegment(index, count) }

// ProgressFigure implements workload.ProgressFigurer: NOPM, as tpcc.
func (w *Workload) ProgressFigure(committed map[string]int64, span time.Duration) workload.Figure {
	return w.tpcc.ProgressFigure(baseNames(committed), span)
}

// baseNames merges committed counts named "group/type" by type.
func baseNames(committed map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(committed))
	for name, n := range committed {
		out[analytic.BaseName(name)] += n
	}
	return out
}
