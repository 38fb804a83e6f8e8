// Package tpcc is the TPC-C benchmark (TPC-C standard specification,
// revision 5.11), with the schema of HammerDB's PostgreSQL TPROC-C: the nine
// tables warehouse, district, customer, history, new_order, orders,
// order_line, item and stock with HammerDB's column names, and its index
// names (warehouse_i1 ... stock_i1, customer_i2, orders_i2) built after the
// load.
//
// Initial data follows clause 4.3.3.1 and is a pure function of
// (--seed, table, batch): item is one set of 100,000 rows; every
// warehouse adds 10 districts, 100,000 stock rows, and per district 3,000
// customers, 3,000 history rows, 3,000 orders (customer ids a random
// permutation), 5..15 order lines each, and 900 new orders (orders
// 2101..3000, the undelivered 30%). 10% of i_data and s_data contain
// "ORIGINAL". Timestamps of the load are a fixed instant (loadTime) so that
// the data stays a function of the seed.
//
// The five transactions of clause 2 run as client-side SQL through pgx, so
// they follow the connection's DefaultQueryExecMode (pgarena's -M
// simple|extended|prepared), with statements that do not depend on each
// other pipelined (new-order: 2 round trips, payment 2, delivery 1). With
// --stored-procs each is one call of a PL/pgSQL function that init creates
// (procs.go). One file per transaction; each cites its clauses. The mix is
// 45/43/4/4/4 (new_order, payment, order_status, delivery, stock_level)
// drawn from a shuffled deck of 100 cards.
//
// The 1% of new-orders that the specification rolls back (clause 2.4.1.4)
// return nil from Worker.Do: they are completed business transactions,
// not failures, so the driver counts them with the committed ones, and
// Workload.Rollbacks counts them apart. HammerDB's NOPM, the growth of
// sum(D_NEXT_O_ID), leaves them out; a summary that wants to match it
// subtracts Rollbacks or reads the database.
//
// The NURand constants C (clause 2.1.6) derive from --seed. Init records the
// load's C for C_LAST in a comment on customer.c_last; a run reads it and
// picks its own C for C_LAST at the distance clause 2.1.6.1 requires, even
// when run and init were given different seeds. (A database loaded by
// another tool has no such comment: the run then cannot know the load's C
// and says so in its parameters.)
//
// Each client is a terminal of one home warehouse (HammerDB's virtual user):
// client id i works on warehouse i mod W + 1 and, for stock-level, district
// (i div W) mod 10 + 1 (clause 2.8.1.2: the district is fixed per terminal).
// With --all-warehouses every transaction picks its warehouse at random.
//
// The constants below are the specification's and are not knobs.
package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// Cardinalities of clause 1.2 and 4.3.3.1 (not knobs).
const (
	numItems             = 100000 // item rows; stock rows per warehouse
	districtsPerWH       = 10
	customersPerDistrict = 3000
	ordersPerDistrict    = 3000
	newOrdersPerDistrict = 900 // orders 2101..3000 are undelivered
	firstNewOrder        = ordersPerDistrict - newOrdersPerDistrict + 1
)

// Transaction types, indexes into TxTypes.
const (
	txNewOrder workload.TxType = iota
	txPayment
	txOrderStatus
	txDelivery
	txStockLevel
)

var txNames = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// Meta describes tpcc to the registry (internal/workload/all registers it).
var Meta = workload.Meta{
	Name:        "tpcc",
	Description: "TPC-C (rev. 5.11), HammerDB TPROC-C compatible schema",
	New:         func() workload.Workload { return New() },
	TestFlags:   []string{"--warehouses", "1"},
	// The transactions repeat a few dozen statements with new
	// parameters; parsing and planning each again would measure the
	// planner more than the benchmark (and halves NOPM on a small
	// server).
	QueryMode: "prepared",
}

// Workload is the tpcc benchmark. Use New (or the registry).
type Workload struct {
	warehouses    int
	allWarehouses bool
	storedProcs   bool
	seed          uint64
	fillfactor    int
	// citus distributes the tables (citus.go): set by --citus, or by
	// PrepareInit when the target has the extension.
	citus      bool
	shardCount int
	// sliceText is --warehouse-range; sliceFirst..sliceLast its warehouses
	// (0, 0: the whole load).
	sliceText             string
	sliceFirst, sliceLast int
	// loadCLast is the C for C_LAST the data was loaded with, read by
	// Prepare (-1: unknown, a database pgarena did not load).
	loadCLast int64
	// procsPresent says whether the database has the functions of
	// --stored-procs, read by Prepare ("" before).
	procsPresent string
	// keyingThinking turns on the keying and think times of clause 5.2.5
	// (pacing.go).
	keyingThinking bool
	// segments is how many processes the run is split over (SetSegment;
	// 0: the whole run here).
	segments int
	// functionsOnly makes init create the functions alone (hammerdb.go).
	functionsOnly bool

	flags *pflag.FlagSet
	// rollbacks counts new-orders rolled back by the 1% rule of clause
	// 2.4.1.4, over all workers.
	rollbacks atomic.Int64
	// progressRollbacks is rollbacks at the last ProgressFigure call.
	progressRollbacks int64
}

// defaultWarehouses is the size of `pgarena run tpcc` on the embedded
// cluster and of `pgarena init tpcc` without --warehouses: about 1 GB,
// loaded in well under a minute on two cores.
const defaultWarehouses = 10

// New returns a tpcc workload with the default parameters.
func New() *Workload {
	w := &Workload{seed: 1}
	w.loadCLast = constantsFor(w.seed).cLastLoad
	fs := pflag.NewFlagSet("tpcc", pflag.ContinueOnError)
	fs.IntVarP(&w.warehouses, "warehouses", "w", defaultWarehouses, "number of warehouses (init; a run reads it from the database and refuses a different value)")
	fs.BoolVar(&w.allWarehouses, "all-warehouses", false, "every transaction picks a random warehouse instead of the client's home warehouse")
	fs.BoolVar(&w.storedProcs, "stored-procs", false, "run each transaction as one call of a PL/pgSQL function created at init (HammerDB's default on PostgreSQL)")
	fs.BoolVar(&w.citus, "citus", false, "distribute the tables on a Citus coordinator (init; automatic when the target has the citus extension)")
	fs.IntVar(&w.shardCount, "shard-count", defaultShardCount, "shards per distributed table with Citus (init; 48 divides evenly over 1, 2, 3, 4, 6, 8, 12, 16, 24 or 48 workers)")
	fs.StringVar(&w.sliceText, "warehouse-range", "", "load only warehouses FROM-TO of --warehouses (init; run one init per slice, from several machines at once if you like: the loader that completes the set builds the keys)")
	fs.IntVar(&w.fillfactor, "fillfactor", 100, "fillfactor of the tables (init; 10..100, lower leaves room in each page for HOT updates)")
	fs.BoolVar(&w.keyingThinking, "keying-thinking", false, "emulate terminal users (TPC-C clause 5.2.5): before each transaction a keying time (new_order 18 s, payment 3 s, others 2 s), after it a think time (exponential, mean 12/12/10/5/5 s), neither in latency; a client then runs about 1 transaction per 21 s, so 10 clients per warehouse give at most 12.86 NOPM per warehouse (closed loop only: ignored with --rate/--schedule)")
	workload.ForVerbs(fs, workload.InitVerbs, "warehouses", "citus", "shard-count", "fillfactor")
	fs.BoolVar(&w.functionsOnly, "functions-only", false, "create only the functions and procedures (--stored-procs' and HammerDB's) on a TPC-C database already loaded, by pgarena or HammerDB, leaving its tables and data alone; same-named ones pgarena did not create are left alone (init)")
	workload.ForVerbs(fs, []string{workload.VerbInit}, "warehouse-range", "functions-only")
	workload.ForVerbs(fs, []string{workload.VerbRun}, "all-warehouses", "stored-procs", "keying-thinking")
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
	if w.warehouses < 1 {
		return fmt.Errorf("warehouses must be at least 1 (got %d)", w.warehouses)
	}
	if w.fillfactor < 10 || w.fillfactor > 100 {
		return fmt.Errorf("--fillfactor must be between 10 and 100 (got %d)", w.fillfactor)
	}
	if err := validateShardCount(w.shardCount); err != nil {
		return fmt.Errorf("--%w", err)
	}
	w.sliceFirst, w.sliceLast = 0, 0
	if w.sliceText != "" {
		a, b, ok := strings.Cut(w.sliceText, "-")
		first, err1 := strconv.Atoi(a)
		last, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || first < 1 || first > last || last > w.warehouses {
			return fmt.Errorf("--warehouse-range %q: want FROM-TO with 1 <= FROM <= TO <= --warehouses (%d)", w.sliceText, w.warehouses)
		}
		w.sliceFirst, w.sliceLast = first, last
	}
	return nil
}

// warehouseColumn names each table's warehouse column (item has none).
var warehouseColumn = lazy.Value[map[string]string]{New: buildWarehouseColumn}

func buildWarehouseColumn() map[string]string {
	return map[string]string{
		"warehouse": "w_id", "district": "d_w_id", "customer": "c_w_id", "history": "h_w_id",
		"new_order": "no_w_id", "orders": "o_w_id", "order_line": "ol_w_id", "stock": "s_w_id",
	}
}

// SliceOf implements workload.Slicer: warehouses split into n ranges
// whose sizes differ by at most one.
func (w *Workload) SliceOf(i, n int) error {
	switch {
	case w.sliceText != "":
		return fmt.Errorf("give either --segment or --warehouse-range, not both")
	case n > w.warehouses:
		return fmt.Errorf("%d slices of %d warehouses: give at most %d pods, or more warehouses", n, w.warehouses, w.warehouses)
	case i < 0 || i >= n:
		return fmt.Errorf("slice %d of %d does not exist", i, n)
	}
	w.sliceFirst, w.sliceLast = i*w.warehouses/n+1, (i+1)*w.warehouses/n
	return nil
}

// Slice implements workload.Slicer for --warehouse-range. The slices of
// one database must not overlap; together they must cover 1..W.
func (w *Workload) Slice() (workload.Slice, bool) {
	if w.sliceFirst == 0 {
		return workload.Slice{}, false
	}
	first, last := w.sliceFirst, w.sliceLast
	return workload.Slice{
		Name: fmt.Sprintf("%d-%d", first, last),
		Clear: func(table string) string {
			if col, ok := warehouseColumn.Get()[table]; ok {
				return fmt.Sprintf("delete from %s where %s between %d and %d", table, col, first, last)
			}
			if table == "item" && first == 1 {
				return "delete from item"
			}
			return ""
		},
		Complete: func(names []string) bool {
			covered := make([]bool, w.warehouses+1)
			for _, n := range names {
				a, b, _ := strings.Cut(n, "-")
				lo, _ := strconv.Atoi(a)
				hi, _ := strconv.Atoi(b)
				for i := max(lo, 1); i <= min(hi, w.warehouses); i++ {
					covered[i] = true
				}
			}
			for _, c := range covered[1:] {
				if !c {
					return false
				}
			}
			return true
		},
	}, true
}

// PrepareInit implements workload.InitPreparer: with the citus extension
// on the target, init distributes the tables.
func (w *Workload) PrepareInit(ctx context.Context, conn *pgx.Conn) error {
	has, err := workload.Citus(ctx, conn, "tpcc", w.citus)
	w.citus = has
	return err
}

// Distribute implements workload.Distributor: Citus's distribution of the
// tables (the functions are distributed with their creation, in PostLoad).
func (w *Workload) Distribute() []string {
	if !w.citus {
		return nil
	}
	return citusDDL(citusOptions{shardCount: w.shardCount})
}

// SetSeed implements workload.Seeder: the seed of the initial data and of
// the NURand constants.
func (w *Workload) SetSeed(seed uint64) {
	w.seed = seed
	w.loadCLast = constantsFor(seed).cLastLoad
}

// constants returns the NURand constants of a run: C_ID and C_OL_I_ID from
// the seed, C_LAST at the distance of clause 2.1.6.1 from the load's.
func (w *Workload) constants() constants {
	c := constantsFor(w.seed)
	if w.loadCLast >= 0 {
		c.cLastLoad = w.loadCLast
		c.cLastRun = runCLast(w.loadCLast, w.seed)
	}
	return c
}

// ValidateRun implements workload.RunValidator. In home-warehouse mode each
// client is a terminal of its home warehouse, and the specification has 10
// terminals per warehouse (clause 4.2.2): more clients than that would
// stack terminals on warehouses and measure contention the benchmark does
// not define.
func (w *Workload) ValidateRun(clients int) error {
	if !w.allWarehouses && clients > 10*w.warehouses {
		return fmt.Errorf("%d clients for %d warehouse(s): home-warehouse mode allows 10 clients per warehouse (TPC-C clause 4.2.2 terminals); add warehouses or pass --all-warehouses",
			clients, w.warehouses)
	}
	return nil
}

// TxTypes implements workload.Workload.
func (w *Workload) TxTypes() []string { return txNames }

// Rollbacks returns the number of new-order transactions rolled back by
// the specification's 1% rule since the workload was made. The driver
// counts them as completed (they return nil, see newOrder).
func (w *Workload) Rollbacks() int64 { return w.rollbacks.Load() }

// Params implements workload.Flagser.
func (w *Workload) Params() map[string]string {
	c := w.constants()
	load := strconv.Itoa(int(c.cLastLoad))
	if w.loadCLast < 0 {
		load = "unknown (database not loaded by pgarena)"
	}
	p := map[string]string{
		"warehouses":      strconv.Itoa(w.warehouses),
		"all_warehouses":  strconv.FormatBool(w.allWarehouses),
		"stored_procs":    strconv.FormatBool(w.storedProcs),
		"keying_thinking": strconv.FormatBool(w.keyingThinking),
		"c_last_load":     load,
		"c_last_run":      strconv.Itoa(int(c.cLastRun)),
		"c_id":            strconv.Itoa(int(c.cID)),
		"c_ol_i_id":       strconv.Itoa(int(c.cOLIID)),
	}
	if w.procsPresent != "" {
		p["stored_procs_present"] = w.procsPresent
	}
	return p
}

// tableNames lists the nine tables, for Prepare.
var tableNames = []string{"warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"}

// Prepare implements workload.Preparer: it reads the number of warehouses
// from the database. If --warehouses was given and differs, it fails: the
// run would address warehouses that do not exist, or leave some idle.
func (w *Workload) Prepare(ctx context.Context, conn pgtext.Querier) error {
	missing, err := workload.FirstMissing(ctx, conn, tableNames, false)
	if err != nil {
		return fmt.Errorf("tpcc: look for tables: %w", err)
	}
	if missing != "" {
		return fmt.Errorf("database is not initialised for tpcc (table %s is missing): run `pgarena init tpcc` first", missing)
	}
	var n, maxID int
	var mark string
	if err := conn.QueryRow(ctx, `select count(*), coalesce(max(w_id), 0),
		coalesce(obj_description('warehouse'::regclass, 'pg_class'), '') from warehouse`).Scan(&n, &maxID, &mark); err != nil {
		return fmt.Errorf("tpcc: read warehouses: %w", err)
	}
	if i := strings.Index(mark, "; slices "); i >= 0 && !strings.Contains(mark, "; keys built") {
		return fmt.Errorf("tpcc: the load by --warehouse-range is incomplete (loaded: %s): load the missing warehouses first",
			strings.TrimPrefix(mark[i:], "; slices "))
	}
	if n == 0 {
		return errors.New("tpcc: table warehouse is empty: run `pgarena init tpcc` again")
	}
	if maxID != n {
		return fmt.Errorf("tpcc: table warehouse holds %d warehouses numbered up to %d: a run needs warehouses 1..N", n, maxID)
	}
	if w.flags.Changed("warehouses") && n != w.warehouses {
		return fmt.Errorf("the database holds %d warehouses but --warehouses %d was given: leave it out to use %d, or run `pgarena init tpcc --warehouses %d`",
			n, w.warehouses, n, w.warehouses)
	}
	missing, err = workload.FirstMissing(ctx, conn, procSignatures, true)
	if err != nil {
		return fmt.Errorf("tpcc: look for functions: %w", err)
	}
	if w.storedProcs && missing != "" {
		return fmt.Errorf("--stored-procs needs the functions pgarena creates at init, and function %s is missing: run `pgarena init tpcc --functions-only` to create them without touching the data, or leave out --stored-procs", missing)
	}
	w.procsPresent = strconv.FormatBool(missing == "")
	w.warehouses = n
	var comment string
	if err := conn.QueryRow(ctx, `select coalesce(col_description('customer'::regclass, attnum), '')
		from pg_attribute where attrelid = 'customer'::regclass and attname = 'c_last'`).Scan(&comment); err != nil {
		return fmt.Errorf("tpcc: read the load's NURand constant: %w", err)
	}
	w.loadCLast = -1
	if c, ok := strings.CutPrefix(comment, cLastComment); ok {
		if v, err := strconv.ParseInt(c, 10, 64); err == nil && v >= 0 && v <= 255 {
			w.loadCLast = v
		}
	}
	return nil
}

// NewWorker implements workload.Workload.
func (w *Workload) NewWorker(id int, rng *rand.Rand) workload.Worker {
	return newWorker(w, id, rng)
}
