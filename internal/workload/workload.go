// Package workload defines the contract every benchmark implements and the
// registry the CLI builds its commands from.
//
// A workload is one package under internal/workload/ whose Meta
// internal/workload/all registers. It describes its schema as Tables whose rows are
// deterministic Batches (a pure function of seed and batch index, so a loader
// may split them across connections freely), and it runs transactions through
// Workers. A Worker never touches a clock, a histogram or a sleep: the driver
// owns time and measurement, the workload owns SQL.
//
// Optional capabilities are small interfaces found by type assertion; a
// workload implements only what it needs. What is the same for every
// instance is a Meta field instead (QueryMode, TestFlags), and failures a
// caller must tell apart are error types found with errors.As (InputError,
// CheckNote, StatementError). The capabilities, and who uses them:
//
//	Workload          gives                                            called by
//	Flagser           its flags; Params for the run record             cli.workloadCommands, session.Params
//	Argser            positional arguments after its name              cli.setWorkloadArgs, runconfig.NewWorkload
//	Seeder            --seed (the CLI owns the flag)                   cli.initCommand, cli.runConfig
//	Scripter          pgbench's -j; where debug() writes               cli.scriptOutput
//	Grouper           client groups in place of one of -c clients      runconfig.GrouperOf, runconfig.groupFlags
//	ReadOnlySplitter  its read-only types as a group on --read-dsn     runconfig.splitReads
//	Finisher          fixed lists: without -T/-t a run ends with them  runconfig.finisherLength
//	OperationCounter  a total of transactions, run as -t per client    runconfig.operationCount
//	ProgressFigurer   a figure in every progress line                  cli.newProgressOutput
//	Segmenter         its share of new keys under --segment i/N        session.prepare
//	Preparer          state read from the database before run, check   session.prepare, session.Check
//	RunValidator      limits on the load model (clients)               session.validateRun
//	Checker           consistency checks                               session.Check
//	FigureReporter    figures of merit over the measured window        session.newFigureWindow
//	Explainer         the slowest type's plan, kept with the run       session.explainSlowest
//	StatementLister   each type's commands, named in the -r report     session.nameStatements
//	ConnSetup         setup of every (re)connected connection          driver.connector
//	InitPreparer      what init needs of the target, before Tables     loader.initialise, cli.initCommand
//	Distributor       distribution DDL between create and load         loader.distribute
//	Functioner        functions init creates and marks, drop removes   loader.functions, loader.CreateFunctions
//	Slicer            a slice of the rows per loading process          loader.initialise, cli.sliceSegment
//
//	Worker            gives                                            called by
//	Pacer             keying and think times (closed loop)             driver.groupRun.connect
//	HookUser          Hooks: \sleep on the driver's clock, -r steps    driver.setHooks
//	Retrier           the failed attempt's draws again, for a retry    driver.client.run
//	Lister            its list's length: a run that ends before it     driver.unfinishedLists
//	                  is cut short
//	PgConnWorker      Do on a pgconn connection alone (no pgx.Conn)    driver.client.run
//	SmallStacker      transactions that fit a goroutine's first stack  driver.client.smallStack
package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/pgtext"
)

// Meta names a workload and makes new instances of it.
type Meta struct {
	Name        string // registry key and CLI argument, e.g. "tpcb"
	Description string // one line for help output
	// New returns a workload with default parameters. Parameters are then
	// set through Flagser (if implemented) before any other method is used.
	New func() Workload
	// TestFlags give the smallest instance worth testing end to end (e.g.
	// tpcc: --warehouses 1), for tests that exercise every workload; nil
	// when the defaults are small already.
	TestFlags []string
	// QueryMode is the protocol of a run without -M: simple, extended or
	// prepared; "" is pgbench's simple.
	QueryMode string
	// PgConnOnly: its Workers run statements through the connection's
	// PgConn only (pgconn, internal/roundtrip), never pgx.Conn's query
	// methods, so its clients' connections carry no pgx statement cache
	// (~3.6 KB per connection under -M prepared); when they are also
	// PgConnWorkers, the clients connect with pgconn alone. Its Preparer,
	// Checker, FigureReporter and Explainer get a *pgtext.Conn (when every
	// workload of the run is PgConnOnly: the run builds no pgx.Conn).
	PgConnOnly bool
}

// Workload is one benchmark: its schema and data, and a way to run its
// transactions.
type Workload interface {
	Meta() Meta
	// Validate checks parameters after flags were parsed. Its error is shown
	// to the user as one line and exits with code 2.
	Validate() error
	// Tables lists the schema in creation order.
	Tables() []Table
	// TxTypes names the transaction types a Worker may return from Next,
	// indexed by TxType.
	TxTypes() []string
	// NewWorker makes the transaction source of one client. rng is seeded
	// deterministically by the driver from the run seed and the client id.
	NewWorker(id int, rng *rand.Rand) Worker
}

// TxType indexes Workload.TxTypes.
type TxType int

// Worker runs the transactions of one client, one at a time. Do is given the
// client's current connection: the driver may replace it (reconnect, or a new
// connection per transaction with -C) between calls.
type Worker interface {
	// Next chooses the next transaction type (mix, deck).
	Next() TxType
	// Do runs one transaction. No clocks, no sleeps, no measurement. On
	// error the transaction must have been rolled back or the connection be
	// unusable; the driver classifies and counts the error.
	Do(ctx context.Context, conn *pgx.Conn, tx TxType) error
}

// PgConnWorker is implemented by the Workers of a Meta.PgConnOnly
// workload. The driver then connects their clients with pgconn alone, no
// pgx.Conn (its type map, write buffer and copy of the configuration:
// ~3 KB a client), gives each new connection to UsePgConn and calls
// DoPgConn in place of Do.
type PgConnWorker interface {
	// UsePgConn makes pc the connection of the next DoPgConn calls,
	// proto its query protocol (-M); nothing is prepared on it yet. It
	// does no I/O.
	UsePgConn(pc *pgconn.PgConn, proto Protocol)
	// DoPgConn is Do on the connection UsePgConn gave.
	DoPgConn(ctx context.Context, tx TxType) error
}

// SmallStacker is implemented by PgConnWorkers whose transactions can
// fit the 2 KB stack a goroutine starts with: a client's goroutine is
// otherwise grown to 4 KB when it starts (internal/gostack), so that a
// deeper path is not reached by repeated growths. Each 2 KB not grown is
// 20 MB at 10,000 clients. internal/session's TestClientStackStaysSmall
// checks that the clients of one that says so stay at 2 KB.
type SmallStacker interface {
	// SmallStack reports whether each transaction, run on a connection
	// of the simple protocol with no netio.Hold, keeps within 2 KB of
	// stack.
	SmallStack() bool
}

// Pacer is implemented by Workers that emulate a user's pauses around each
// transaction (TPC-C keying and think times, clause 5.2.5). The Worker only
// draws the durations (from its own rng, so they are reproducible); the
// driver owns the clock: in a closed loop it sleeps keying after Next and
// before Do, and thinking after Do, both cut short when the run stops.
// Neither counts in the transaction's latency (they are the user's time,
// not queueing). An open loop ignores them: its schedule sets the arrivals.
// Pauses returns zeros when pacing is off.
type Pacer interface {
	Pauses(tx TxType) (keying, thinking time.Duration)
}

// Hooks are the driver's services to a Worker that asks for them
// (HookUser): the Worker still never reads a clock or sleeps itself.
type Hooks struct {
	// Sleep pauses the client for d in the middle of a transaction, on the
	// driver's clock (pgbench's \sleep): the pause counts in the
	// transaction's latency, as in pgbench. It returns false when the run
	// stopped meanwhile; the Worker then abandons the transaction and
	// returns ErrStopped (counted neither done nor failed).
	Sleep func(d time.Duration) bool
	// Step is nil unless per-statement latencies were asked for (-r).
	// The Worker calls it when command i of the transaction's script
	// (StatementLister) has completed; the driver times command i as the
	// span since the previous Step, or since the transaction started.
	Step func(i int)
}

// HookUser is implemented by Workers that use Hooks. The driver calls
// SetHooks once, before the Worker's first transaction.
type HookUser interface {
	SetHooks(h Hooks)
}

// StatementLister is implemented by workloads whose transactions are
// scripts of commands, for the per-statement report (-r): the commands of
// transaction type tx, in the order Hooks.Step numbers them.
type StatementLister interface {
	Statements(tx TxType) []string
}

// Retrier is implemented by Workers whose transactions draw random values
// that a retry must draw again (pgbench's scripts). The driver calls Retry
// after a failure it will retry (--max-tries), before calling Do again with
// the same type: the Worker then replays the draws of the failed attempt,
// as pgbench restores a client's random state for a retry.
type Retrier interface {
	Retry()
}

// StatementError is an error of Do that names the command of the
// transaction's script (StatementLister's numbering) that failed, for the
// per-command failures and retries of -r.
type StatementError struct {
	Statement int
	Err       error
}

func (e *StatementError) Error() string { return e.Err.Error() }
func (e *StatementError) Unwrap() error { return e.Err }

// Scripter is implemented by workloads that run pgbench scripts (script,
// tpcb). Before the run the CLI calls SetThreads with -j (pgbench's
// default: 1): pgbench draws the script of each transaction from a random
// state per thread, and so do they. SetDebugOutput sets where the
// scripts' debug() function writes (stderr).
type Scripter interface {
	SetThreads(n int)
	SetDebugOutput(out io.Writer)
}

// ErrStopped is returned by Do when the run stopped during a Hooks.Sleep.
var ErrStopped = errors.New("run stopped during a pause of the transaction")

// Table is one table of a workload's schema.
type Table struct {
	Name string
	// Create holds the statements that create the table (and its
	// partitions), run in order before loading.
	Create []string
	// Columns names the columns Batches fills, in order.
	Columns []string
	// Rows generates the initial data; Rows.N == 0 means the table starts
	// empty.
	Rows Batches
	// PostLoad holds statements run after all tables are loaded (primary
	// keys, indexes, foreign keys), in order.
	PostLoad []string
	// Children lists partitions of this table that pgarena also created
	// (they are marked and dropped with it).
	Children []string
}

// Batches generates a table's initial rows as N batches. Fill must be a pure
// function of the workload's parameters and seed and of i: the loader calls
// it for any batch, in any order, from several goroutines at once. It
// appends the rows of batch i to dst[:0] and returns it; row slices in dst
// may be reused by the callee.
type Batches struct {
	N    int
	Rows int64 // total rows over all batches, for progress
	Fill func(i int, dst [][]any) [][]any
	// Text, when set in place of Fill, generates batch i as lines of
	// PostgreSQL's COPY text format with '|' between columns (TPC-H's
	// dbgen writes its rows so), appended to dst; it returns dst and the
	// rows it appended. The same purity rules as Fill's apply.
	Text func(i int, dst []byte) ([]byte, int64, error)
}

// Flagser is implemented by workloads that take parameters.
type Flagser interface {
	// Flags returns the workload's flags, bound to its fields. Flags that
	// apply to some verbs only are annotated with ForVerbs; the CLI gives
	// each verb's command (and its help) only the flags that apply to it.
	Flags() *pflag.FlagSet
	// Params reports the parameters for the run record: those the flags
	// set, as the workload uses them, and what Prepare read from the
	// database (tpcb's scale).
	Params() map[string]string
}

// The CLI's verbs that take a workload.
const (
	VerbInit  = "init"
	VerbRun   = "run"
	VerbCheck = "check"
	VerbDrop  = "drop"
)

// InitVerbs are the verbs of a flag that shapes the loaded data: init, and
// run, which loads the embedded cluster itself.
var InitVerbs = []string{VerbInit, VerbRun}

// verbsAnnotation is the pflag annotation holding a flag's verbs.
const verbsAnnotation = "pgarena_verbs"

// ForVerbs says that the flags names of fs apply to verbs only. A flag not
// named in any ForVerbs call applies to every verb. An unknown name is a
// programming error: ForVerbs panics.
func ForVerbs(fs *pflag.FlagSet, verbs []string, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, verbsAnnotation, verbs); err != nil {
			panic(fmt.Sprintf("workload flag %q: %v", n, err))
		}
	}
}

// FlagApplies reports whether the workload flag f applies to verb.
func FlagApplies(f *pflag.Flag, verb string) bool {
	verbs, ok := f.Annotations[verbsAnnotation]
	return !ok || slices.Contains(verbs, verb)
}

// Argser is implemented by workloads that take positional arguments after
// their name (sysbench's test: `pgarena run sysbench oltp_read_only`). The
// CLI gives every verb's arguments to SetArgs before Validate; a workload
// without Argser takes none.
type Argser interface {
	// ArgsUsage names the arguments for the usage line ("[TEST]") and
	// explains them for help (which tests there are).
	ArgsUsage() (usage, help string)
	// SetArgs takes the positional arguments. Its error is one line, exit 2.
	SetArgs(args []string) error
}

// Preparer is implemented by workloads that must read state from the
// database before a run (scale, warehouse count). It returns an error
// naming what is missing when the database was not initialised.
//
// conn, here and in Checker, FigureReporter and Explainer, is the run's
// control connection: a *pgx.Conn (PgxConn) unless Meta.PgConnOnly, when
// it may be a *pgtext.Conn (text results, pgtext's types only).
type Preparer interface {
	Prepare(ctx context.Context, conn pgtext.Querier) error
}

// ConnSetup is implemented by workloads that need per-connection work
// (session settings) each time the driver opens a connection.
type ConnSetup interface {
	SetupConn(ctx context.Context, conn *pgx.Conn) error
}

// Checker is implemented by workloads with consistency checks.
type Checker interface {
	Check(ctx context.Context, conn pgtext.Querier) error
}

// RunValidator is implemented by workloads whose parameters constrain the
// load model (TPC-C: at most 10 clients per warehouse in home-warehouse
// mode). The CLI calls it once the parameters are known (after Prepare when
// they come from the database); its error is one line, exit 2.
type RunValidator interface {
	ValidateRun(clients int) error
}

// FigureReporter is implemented by workloads with figures of merit read
// around a run (TPC-C's NOPM and TPM as HammerDB defines them; TPC-H's
// power@size from the query times). The session calls Snapshot just
// before the measured window and just after it, and Figures with what the
// window measured.
type FigureReporter interface {
	Snapshot(ctx context.Context, conn pgtext.Querier) (map[string]float64, error)
	Figures(w FigureWindow) []Figure
}

// FigureWindow is what a run measured between FigureReporter's two
// snapshots.
type FigureWindow struct {
	Before, After map[string]float64 // the snapshots
	Elapsed       time.Duration      // the window's length
	Committed     map[string]int64   // committed transactions per type
	Times         map[string]TxTimes // their latencies per type
	// Measured and Counted are tps's time base and count: the measured
	// intervals' summed length and their committed transactions per type
	// (no drain). A figure that is a rate of the clients' own counts
	// (sysbench's qps) uses them, so that it is tps times a constant.
	Measured time.Duration
	Counted  map[string]int64
}

// TxTimes are the latencies of one transaction type's committed
// transactions in the figures' window (from the latency histograms: 3
// significant digits): their total and the shortest.
type TxTimes struct {
	Total, Min time.Duration
}

// Finisher is implemented by workloads whose clients each run a fixed
// list of transactions and then stop, Do returning ErrStopped after the
// last (tpch's power and throughput tests). Transactions is the longest
// list, 0 when the clients loop: without -T or -t the CLI then runs the
// clients to their end (-t Transactions()) instead of the default -T.
type Finisher interface {
	Transactions() int
}

// Lister is implemented by a Finisher's Workers: Len is the number of
// transactions in the worker's list (0: it loops). The driver counts a
// client whose worker has a list as finished when that many of its
// transactions were done or failed; a run that ends (-T, -t, a stop)
// with a list unfinished is cut short (driver.Result.Stopped).
type Lister interface {
	Len() int
}

// Explainer is implemented by workloads that can show the plan of a
// transaction type's statement (tpch: a query). When ExplainSlowest
// reports true (tpch --explain-slowest) the session saves, after the
// clients stop, Explain of the run's slowest type (highest mean latency)
// with the run. Explain gets the type's name as the summary has it
// ("power/q5"), runs EXPLAIN (ANALYZE, BUFFERS) and returns its text, or
// "" when the type has no one statement to explain (a refresh function;
// the next slowest is tried).
type Explainer interface {
	ExplainSlowest() bool
	Explain(ctx context.Context, conn pgtext.Querier, txType string) (string, error)
}

// InputError is an error of a workload's Check or Prepare that is the
// user's to fix, not a failed check (tpch --answers at a scale without an
// answer set): one line, exit 2.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Figure is one named figure of merit of a run.
type Figure struct {
	Name  string  `json:"name"`  // "nopm"
	Value float64 `json:"value"` // in Unit
	Unit  string  `json:"unit"`  // "new orders/min"
	Note  string  `json:"note,omitempty"`
	// Tx names the transaction type the figure belongs to ("rollbacks" of
	// "new_order"); empty for a figure of the whole run.
	Tx string `json:"tx,omitempty"`
	// CrossCheck names the figure the clients counted that this one, read
	// from the database, should agree with ("nopm_clients" for "nopm"):
	// pgarena merge compares them on the merged run.
	CrossCheck string `json:"cross_check,omitempty"`
}

// ProgressFigurer is implemented by workloads with a figure of merit worth
// showing in every progress line (TPC-C: NOPM). The CLI calls it from one
// goroutine, in time order, for consecutive spans of the run, with the
// transactions committed per type in the span.
type ProgressFigurer interface {
	ProgressFigure(committed map[string]int64, span time.Duration) Figure
}

// Functioner is implemented by workloads whose init creates functions
// (tpcc's stored procedures, made by PostLoad statements). The loader marks
// them as pgarena's like its tables, refuses to replace same-named
// functions it did not create, and drop removes them.
type Functioner interface {
	Functions() []Function
	// FunctionsOnly says whether init was asked for the functions alone
	// (tpcc --functions-only): then init creates them with their Create
	// statements on a database already loaded, leaving its tables and
	// data alone.
	FunctionsOnly() bool
}

// Function is one function or procedure a Functioner's init creates.
type Function struct {
	Signature string // as to_regprocedure reads it: "name(int,text)"
	Create    string // the statement that creates it
}

// InitPreparer is implemented by workloads whose schema depends on the
// target (tpcc: distributed tables when the citus extension is there). The
// loader calls PrepareInit before Tables, on its first connection.
type InitPreparer interface {
	PrepareInit(ctx context.Context, conn *pgx.Conn) error
}

// Distributor is implemented by workloads that distribute their tables on a
// sharded target (tpcc on Citus). The loader runs Distribute's statements
// after creating the tables and before loading them, each on its own (no
// transaction block); when there are any, it loads without COPY FREEZE.
type Distributor interface {
	Distribute() []string
}

// Slicer is implemented by workloads whose load can be split over several
// pgarena processes (several machines), each loading a slice of the rows
// into tables they share (tpcc --warehouse-range). When Slice reports
// ok, Tables generates the slice's rows only.
type Slicer interface {
	Slice() (s Slice, ok bool)
	// SliceOf selects the i-th of n slices of about equal size (0 <= i <
	// n), for init --segment i/N (pgarena k8s init); an error when the
	// data cannot be split so, or a slice was also given by the workload's
	// own flags.
	SliceOf(i, n int) error
}

// Slice is the part of a workload's data one loader makes.
type Slice struct {
	// Name tells the slice apart from the others ("1-50"): letters,
	// digits and '-' only.
	Name string
	// Clear returns the statement that deletes the slice's rows of a
	// table, so that a slice loaded again replaces its rows; "" when the
	// slice has no rows in that table.
	Clear func(table string) string
	// Complete reports whether the slices named, loaded so far, make the
	// whole data set (then keys and indexes are built).
	Complete func(names []string) bool
}

// OperationCounter is implemented by workloads whose users give a run's
// length as a total count of operations over all clients (YCSB's
// operationcount). When OperationCount is above 0 the CLI runs that many
// transactions in all, as -t per client.
type OperationCounter interface {
	OperationCount() int
}

// Seeder is implemented by workloads whose initial data depends on a seed
// (pgarena init --seed, also passed by run). The CLI owns the --seed flag:
// workloads must not define one.
type Seeder interface {
	SetSeed(seed uint64)
}

// CheckNote is a Check error that describes an expected state rather than
// a failure (tpcb after simple-update runs): the CLI prints Err as a note
// and the check passes.
type CheckNote struct{ Err error }

func (n *CheckNote) Error() string { return n.Err.Error() }
func (n *CheckNote) Unwrap() error { return n.Err }

// ReadOnlySplitter is implemented by workloads whose read-only
// transaction types can run apart from the others (--read-dsn sends them
// to a replica, as a client group of their own). reads runs only the
// read-only types, writes the rest (nil when every type reads only), each
// keeping the mix's proportions among its own types; share is the
// read-only types' share of the mix (0 when none is read-only: reads is
// then nil).
type ReadOnlySplitter interface {
	SplitReadOnly() (reads, writes Workload, share float64)
}

// Grouper is implemented by workloads that run as several client groups
// at once (chbench: transactional clients and analytic streams). The CLI
// runs Groups as the run's client groups, each with its own clients (the
// workload's flags give the counts), in place of one group of -c clients.
// Each part's Workload has the whole workload's Meta, tables, checks and
// figures, and only its own transaction types and workers; the figures of
// merit are the whole workload's, given committed counts named
// "group/type".
type Grouper interface {
	Groups() []Part
}

// Part is one client group of a Grouper.
type Part struct {
	Name     string // the group's name: "oltp"
	Workload Workload
	Clients  int
	// After names an earlier part whose clients must all have finished
	// before this part's clients start (tpch: the throughput test after
	// the power test); "" starts with the run.
	After string
}

// Segmenter is implemented by workloads that make keys (inserts) when a
// run is split over several processes (--segment index/count): the
// process runs segment index of count, and takes a share of the new keys
// disjoint from the other segments' (ycsb). Called once, before Prepare
// and before any Worker is made; not called for a whole run.
type Segmenter interface {
	SetSegment(index, count int)
}

// registry is made by the first Register, not at program start.
var registry struct {
	sync.Mutex
	m map[string]Meta
}

// Register adds a workload to the registry. It panics on a duplicate name,
// which is a programming error.
func Register(m Meta) {
	registry.Lock()
	defer registry.Unlock()
	if registry.m == nil {
		registry.m = map[string]Meta{}
	}
	if _, dup := registry.m[m.Name]; dup {
		panic(fmt.Sprintf("workload %q registered twice", m.Name))
	}
	registry.m[m.Name] = m
}

// FirstMissing returns the first of names that does not exist in the
// database, "" when all do. Names are tables, or with functions true
// function signatures ("name(int,text)"). For Preparers that must say what
// an uninitialised database lacks.
func FirstMissing(ctx context.Context, conn pgtext.Querier, names []string, functions bool) (string, error) {
	lookup := "to_regclass(n)"
	if functions {
		lookup = "to_regprocedure(n)"
	}
	var missing string
	err := conn.QueryRow(ctx, `select coalesce((select n from unnest($1::text[]) with ordinality u(n, i)
		where `+lookup+` is null order by i limit 1), '')`, names).Scan(&missing)
	return missing, err
}

// PgxConn is conn as the *pgx.Conn the session gives the Preparer,
// Checker, FigureReporter and Explainer of a workload that is not
// Meta.PgConnOnly (those of PgConnOnly workloads get a *pgtext.Conn).
func PgxConn(conn pgtext.Querier) (*pgx.Conn, error) {
	if c, ok := conn.(*pgx.Conn); ok {
		return c, nil
	}
	return nil, fmt.Errorf("a %T where a *pgx.Conn is needed (a workload that is not PgConnOnly)", conn)
}

// Get returns the registered workload named name.
func Get(name string) (Meta, bool) {
	registry.Lock()
	defer registry.Unlock()
	m, ok := registry.m[name]
	return m, ok
}

// All returns every registered workload sorted by name.
func All() []Meta {
	registry.Lock()
	defer registry.Unlock()
	out := make([]Meta, 0, len(registry.m))
	for _, m := range registry.m {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NextRow returns the row Batches.Fill fills next and appends to dst: the
// row slice already at that position of dst when it holds width values
// (the loader hands the previous batch back), else a new one.
func NextRow(dst [][]any, width int) []any {
	var r []any
	if len(dst) < cap(dst) {
		r = dst[:len(dst)+1][len(dst)]
	}
	if cap(r) < width {
		r = make([]any, width)
	}
	return r[:width]
}

// Protocol is how a worker sends its statements, chosen from its
// connection's DefaultQueryExecMode (-M) as pgbench and sysbench do.
type Protocol int

const (
	// ProtocolSimple: the simple query protocol, values written into the text.
	ProtocolSimple Protocol = iota
	// ProtocolExtended: unnamed statements, values as text parameters
	// (PQsendQueryParams).
	ProtocolExtended
	// ProtocolPrepared: named statements prepared once per connection
	// (PQsendQueryPrepared).
	ProtocolPrepared
)

// ProtocolOf maps a connection's query mode to its Protocol.
func ProtocolOf(mode pgx.QueryExecMode) Protocol {
	switch mode {
	case pgx.QueryExecModeSimpleProtocol:
		return ProtocolSimple
	case pgx.QueryExecModeExec, pgx.QueryExecModeDescribeExec:
		return ProtocolExtended
	default:
		return ProtocolPrepared
	}
}
