// Package loader creates a workload's schema and fills it: DDL, parallel
// binary COPY of the workload's deterministic batches over several
// connections, post-load DDL (primary keys, indexes), then VACUUM ANALYZE.
//
// Every table and partition it creates carries a comment starting with
// "pgarena:" (COMMENT ON TABLE); that mark is how pgarena knows a table is
// its own. Init refuses to replace tables without the mark unless forced,
// and Drop drops only marked tables.
//
// # Loading and FREEZE
//
// A table that is not partitioned is loaded by one connection, in one
// transaction that truncates it and then runs COPY ... WITH (FREEZE), as
// pgbench -i does: rows are written frozen and the pages marked all-visible,
// so the VACUUM afterwards has nothing to write and the table does not
// need to be rewritten by a later vacuum to freeze or set hint bits.
// Different tables load in parallel. A partitioned table (COPY FREEZE is
// not possible into a partitioned table) is loaded by all connections at
// once, each claiming batches in turn.
//
// Why not split a big plain table across connections? Measured with tpcb
// at scale 50 (5 million accounts, 640 MB) on 2 cores, two connections
// without FREEZE loaded no faster than one with it (4.4 s against 4.3 s:
// the server, not the client, is the limit), and the VACUUM afterwards,
// which then has to set hint bits and visibility on every page, took 1.2 s
// instead of 0.3 s.
//
// On a machine with many cores a single huge table loaded by one connection
// may become the bottleneck; that trade-off has not been measured there.
//
// Each COPY streams many batches: a reader generates one batch at a time
// into a reused buffer in PostgreSQL's binary COPY format, so no table is
// ever held in memory. The COPY goes through pgconn's CopyFrom with the
// loader's own binary encoder rather than pgx's Conn.CopyFrom, because
// the latter cannot say FREEZE; the encoder writes integers, strings,
// floats and booleans directly and hands other values to pgx's type map,
// encoding them exactly as pgx's CopyFrom would.
package loader

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// Progress receives the loader's progress. Add and TableDone are called
// concurrently from the loading connections.
type Progress interface {
	// Begin is called at the start of the load phase with the tables to
	// load and the rows expected in each (an estimate where batches vary).
	Begin(tables []TableRows)
	// Add reports rows of tables[table] generated and sent.
	Add(table int, rows int64)
	// TableDone reports tables[table] loaded (committed), with its rows.
	TableDone(table int, rows int64)
	// Phase names the phase starting: "create tables", "load", "primary
	// keys", "vacuum analyze".
	Phase(name string)
}

// TableRows is a table to load and the rows expected.
type TableRows struct {
	Name string
	Rows int64
}

// Options tune Init.
type Options struct {
	// Workers is the number of connections loading, adding keys and
	// vacuuming in parallel; 0 means runtime.NumCPU().
	Workers int
	// Force replaces existing tables of the workload pgarena did not
	// create.
	Force bool
	// Progress, if not nil, is told of phases and rows.
	Progress Progress
}

// Stats are the numbers of one Init.
type Stats struct {
	Rows                                  int64
	Create, Load, PostLoad, Vacuum, Total time.Duration
	// MaintenanceWorkMem is what the loader set for its sessions' key
	// and index builds ("" when it kept the server's setting).
	MaintenanceWorkMem string
	// Slice is set for a slice's load (workload.Slicer).
	Slice *SliceStats
}

// SliceStats tell what a slice's load did beyond its rows.
type SliceStats struct {
	// KeysBuilt: this slice completed the set and built the keys.
	KeysBuilt bool
}

// Init (re)creates the tables of w and fills them. Existing tables of w are
// dropped first, in the same transaction that creates the new ones; if any
// of them lacks pgarena's mark, Init returns a *ForeignTablesError and
// changes nothing, unless opts.Force is set. Errors name the table.
func Init(ctx context.Context, dial target.Dialer, w workload.Workload, opts Options) (Stats, error) {
	st, err := initialise(ctx, dial, w, opts)
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		// Cancelled: pgx reports the connections it closed; say why.
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return st, err
}

func initialise(ctx context.Context, dial target.Dialer, w workload.Workload, opts Options) (Stats, error) {
	start := time.Now()
	var st Stats
	if opts.Workers <= 0 {
		opts.Workers = runtime.NumCPU()
	}
	if opts.Progress == nil {
		opts.Progress = nopProgress{}
	}
	if sl, ok := w.(workload.Slicer); ok {
		if s, ok := sl.Slice(); ok {
			return initSlice(ctx, dial, w, s, opts)
		}
	}
	conn, err := dial(ctx)
	if err != nil {
		return st, fmt.Errorf("connect: %w", err)
	}
	defer closeConn(conn)
	if p, ok := w.(workload.InitPreparer); ok {
		if err := p.PrepareInit(ctx, conn); err != nil {
			return st, err
		}
	}
	tables := w.Tables()

	opts.Progress.Phase("create tables")
	t0 := time.Now()
	shared, err := create(ctx, conn, w, tables, opts.Force)
	if err != nil {
		return st, err
	}
	distributed, err := distribute(ctx, conn, w)
	if err != nil {
		return st, err
	}
	if distributed {
		// Loaded like partitioned tables, by all connections: COPY
		// FREEZE needs a table truncated in the loading transaction,
		// which a distributed table's shards are not.
		for _, t := range tables {
			shared[t.Name] = true
		}
	}
	st.Create = time.Since(t0)

	opts.Progress.Phase("load")
	t0 = time.Now()
	jobs := loadJobs(tables, func(t *workload.Table) jobMode {
		if shared[t.Name] {
			return jobShared
		}
		return jobFrozen
	}, nil, opts.Progress)
	conns := []*pgx.Conn{conn}
	defer func() {
		for _, c := range conns[1:] {
			closeConn(c)
		}
	}()
	if conns, err = dialMore(ctx, dial, conns, opts.Workers); err != nil {
		return st, err
	}
	if st.Rows, err = load(ctx, conns, jobs, opts.Progress); err != nil {
		return st, err
	}
	st.Load = time.Since(t0)

	opts.Progress.Phase("primary keys")
	t0 = time.Now()
	if st.MaintenanceWorkMem, err = raiseMaintenanceMem(ctx, conns); err != nil {
		return st, err
	}
	if err := postLoad(ctx, conns, tables); err != nil {
		return st, err
	}
	if err := markFunctions(ctx, conn, w); err != nil {
		return st, err
	}
	st.PostLoad = time.Since(t0)

	opts.Progress.Phase("vacuum analyze")
	t0 = time.Now()
	if err := vacuumAll(ctx, conns, tables); err != nil {
		return st, err
	}
	st.Vacuum = time.Since(t0)
	st.Total = time.Since(start)
	return st, nil
}

// dialMore opens connections until there are n.
func dialMore(ctx context.Context, dial target.Dialer, conns []*pgx.Conn, n int) ([]*pgx.Conn, error) {
	for len(conns) < n {
		c, err := dial(ctx)
		if err != nil {
			return conns, fmt.Errorf("connect: %w", err)
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// vacuumAll runs VACUUM ANALYZE on every table, spread over conns.
func vacuumAll(ctx context.Context, conns []*pgx.Conn, tables []workload.Table) error {
	return eachTable(ctx, conns, tables, func(ctx context.Context, c *pgx.Conn, t *workload.Table) error {
		if err := execSQL(ctx, c, "vacuum analyze "+t.Name); err != nil {
			return fmt.Errorf("vacuum analyze %s: %w", t.Name, err)
		}
		return nil
	})
}

// distribute runs the distribution DDL of a workload.Distributor and
// reports whether there was any.
func distribute(ctx context.Context, conn *pgx.Conn, w workload.Workload) (bool, error) {
	d, ok := w.(workload.Distributor)
	if !ok {
		return false, nil
	}
	stmts := d.Distribute()
	for _, stmt := range stmts {
		if err := execSQL(ctx, conn, stmt); err != nil {
			return false, fmt.Errorf("distribute: %s: %w", stmt, err)
		}
	}
	return len(stmts) > 0, nil
}

// createMarked runs the Create statements of a table and marks it and its
// partitions as pgarena's.
func createMarked(ctx context.Context, conn *pgx.Conn, t *workload.Table, workloadName string) error {
	for _, s := range t.Create {
		if err := execSQL(ctx, conn, s); err != nil {
			return fmt.Errorf("create %s: %w", t.Name, err)
		}
	}
	for _, n := range append([]string{t.Name}, t.Children...) {
		if err := execSQL(ctx, conn, markStatement(n, workloadName)); err != nil {
			return fmt.Errorf("mark %s: %w", n, err)
		}
	}
	return nil
}

// create drops the existing tables of w and creates them anew, marked, in
// one transaction. It returns which tables are partitioned.
func create(ctx context.Context, conn *pgx.Conn, w workload.Workload, tables []workload.Table, force bool) (map[string]bool, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("create tables: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
	// Checked inside the transaction that drops, so that what was checked
	// is what is dropped.
	rels, err := relations(ctx, conn, w)
	if err != nil {
		return nil, err
	}
	fns, err := functions(ctx, conn, w)
	if err != nil {
		return nil, err
	}
	if fe := foreignError(rels, fns); fe != nil && !force {
		return nil, fe
	}
	var existing []string
	for _, r := range rels {
		if r.exists {
			existing = append(existing, r.name)
		}
	}
	if len(existing) > 0 {
		if err := execSQL(ctx, conn, dropStatement(existing)); err != nil {
			return nil, fmt.Errorf("drop old tables: %w", err)
		}
	}
	partitioned := map[string]bool{}
	for i := range tables {
		t := &tables[i]
		if err := createMarked(ctx, conn, t, w.Meta().Name); err != nil {
			return nil, err
		}
		var kind string
		if err := conn.QueryRow(ctx, "select relkind::text from pg_class where oid = to_regclass($1)", t.Name).Scan(&kind); err != nil {
			return nil, fmt.Errorf("create %s: %w", t.Name, err)
		}
		partitioned[t.Name] = kind == "p"
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("create tables: %w", err)
	}
	return partitioned, nil
}

// jobMode is how a table is loaded.
type jobMode int

const (
	// jobFrozen: by one connection, in one transaction that truncates the
	// table and COPYs with FREEZE.
	jobFrozen jobMode = iota
	// jobShared: by every connection at once, each claiming batches in
	// turn (partitioned or distributed tables).
	jobShared
	// jobSlice: by one connection, in one transaction that deletes the
	// slice's rows and COPYs them anew (tables shared by slices).
	jobSlice
)

// loadJob is one table to load.
type loadJob struct {
	t       *workload.Table
	idx     int // in the Progress's tables
	mode    jobMode
	clear   string // jobSlice: the delete statement, or ""
	claimed atomic.Bool
	next    atomic.Int64
	// jobShared: connections copying it now, rows loaded, and whether
	// TableDone was reported.
	copying  atomic.Int32
	loaded   atomic.Int64
	reported atomic.Bool
}

// claim returns the next batch of a shared job.
func (j *loadJob) claim() (int, bool) {
	i := j.next.Add(1) - 1
	return int(i), i < int64(j.t.Rows.N)
}

// loadJobs makes a job of every table with rows and tells progress.
func loadJobs(tables []workload.Table, mode func(*workload.Table) jobMode, clear func(string) string, progress Progress) []*loadJob {
	var jobs []*loadJob
	var rows []TableRows
	for i := range tables {
		t := &tables[i]
		if t.Rows.N == 0 {
			continue
		}
		j := &loadJob{t: t, idx: len(rows), mode: mode(t)}
		if clear != nil {
			j.clear = clear(t.Name)
		}
		jobs = append(jobs, j)
		rows = append(rows, TableRows{Name: t.Name, Rows: t.Rows.Rows})
	}
	progress.Begin(rows)
	return jobs
}

// load fills the tables of jobs over conns. Whole-table jobs are taken
// largest first so the longest starts earliest; every connection then
// helps with the shared ones.
func load(ctx context.Context, conns []*pgx.Conn, jobs []*loadJob, progress Progress) (int64, error) {
	sortJobs(jobs)
	var rows atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range conns {
		g.Go(func() error {
			for _, j := range jobs {
				var n int64
				var err error
				switch {
				case j.mode != jobShared:
					if !j.claimed.CompareAndSwap(false, true) {
						continue
					}
					n, err = loadWhole(gctx, c, j, progress)
					if err == nil {
						progress.TableDone(j.idx, n)
					}
				case j.next.Load() < int64(j.t.Rows.N):
					j.copying.Add(1)
					n, err = copyTable(gctx, c, j.t, false, j.claim, j.idx, progress)
					j.loaded.Add(n)
					// the last connection out reports the table
					if j.copying.Add(-1) == 0 && err == nil && j.reported.CompareAndSwap(false, true) {
						progress.TableDone(j.idx, j.loaded.Load())
					}
				}
				if err != nil {
					return fmt.Errorf("load %s: %w", j.t.Name, err)
				}
				rows.Add(n)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return rows.Load(), err
	}
	return rows.Load(), nil
}

// loadWhole loads a whole table (or a slice's part of it) in one
// transaction that first truncates it, so COPY may FREEZE (PostgreSQL
// requires the table to be created or truncated in the current
// transaction), or deletes the slice's rows.
func loadWhole(ctx context.Context, c *pgx.Conn, j *loadJob, progress Progress) (int64, error) {
	if err := execSQL(ctx, c, "begin"); err != nil {
		return 0, err
	}
	n, err := func() (int64, error) {
		first := "truncate " + j.t.Name
		if j.mode == jobSlice {
			first = j.clear
		}
		if first != "" {
			if err := execSQL(ctx, c, first); err != nil {
				return 0, err
			}
		}
		n, err := copyTable(ctx, c, j.t, j.mode == jobFrozen, j.claim, j.idx, progress)
		if err != nil {
			return n, err
		}
		return n, execSQL(ctx, c, "commit")
	}()
	if err != nil && !c.PgConn().IsClosed() && c.PgConn().TxStatus() != 'I' {
		_ = execSQL(context.WithoutCancel(ctx), c, "rollback")
	}
	return n, err
}

func sortJobs(jobs []*loadJob) {
	// insertion sort, largest first: few tables
	for i := 1; i < len(jobs); i++ {
		for k := i; k > 0 && jobs[k].t.Rows.Rows > jobs[k-1].t.Rows.Rows; k-- {
			jobs[k], jobs[k-1] = jobs[k-1], jobs[k]
		}
	}
}

// isForeignKey reports a statement that adds a foreign key (postLoad
// runs it after the keys it needs).
func isForeignKey(s string) bool {
	return containsFold(s, "foreign key") || containsFold(s, " references ")
}

func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		match := true
		for k := 0; k < len(sub); k++ {
			a, b := s[i+k], sub[k]
			if 'A' <= a && a <= 'Z' {
				a += 'a' - 'A'
			}
			if a != b {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// eachTable runs fn for every table, spread over conns, largest table
// first.
func eachTable(ctx context.Context, conns []*pgx.Conn, tables []workload.Table, fn func(context.Context, *pgx.Conn, *workload.Table) error) error {
	order := make([]*loadJob, len(tables))
	for i := range tables {
		order[i] = &loadJob{t: &tables[i]}
	}
	sortJobs(order)
	var mu sync.Mutex
	next := 0
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range conns {
		g.Go(func() error {
			for {
				mu.Lock()
				if next == len(order) {
					mu.Unlock()
					return nil
				}
				t := order[next].t
				next++
				mu.Unlock()
				if err := fn(gctx, c, t); err != nil {
					return err
				}
			}
		})
	}
	return g.Wait()
}

func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

type nopProgress struct{}

func (nopProgress) Begin([]TableRows)    {}
func (nopProgress) Add(int, int64)       {}
func (nopProgress) TableDone(int, int64) {}
func (nopProgress) Phase(string)         {}
