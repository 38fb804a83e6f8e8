package loader

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// Loading in slices (workload.Slicer): several pgarena processes, on one
// machine or several, each load a slice of a workload's rows into tables
// they share.
//
//   - The first to arrive creates the tables (marked, as Init does); the
//     others find them. An advisory lock orders them.
//   - Each slice loads every table's part in one transaction per table
//     that deletes the slice's rows first: a slice that was interrupted,
//     or is loaded again, ends with exactly its rows.
//   - Each finished slice is recorded in the mark of the workload's first
//     table ("...; slices 1-50 51-100"). The slice that completes the set
//     builds the keys and indexes in the same transaction that records
//     "keys built", so a build that fails or is interrupted leaves the
//     set complete but unkeyed, and the next slice loaded (any of them)
//     builds them. Slices that finish while keys are built wait for it.
//   - No FREEZE: the slices share tables that none of them truncates.

// sliceLockTimeout bounds the wait for the lock other slices hold while
// they create tables or build keys.
const sliceLockTimeout = 2 * time.Hour

var slicesRe = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`; slices ([A-Za-z0-9 -]*)`) }}

var keysBuiltRe = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`; keys built`) }}

var sliceNameRe = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9-]+$`) }}

// sliceState is what the mark of the first table records.
type sliceState struct {
	comment   string
	slices    []string
	keysBuilt bool
}

func parseSliceState(comment string) sliceState {
	st := sliceState{comment: comment, keysBuilt: keysBuiltRe.Get().MatchString(comment)}
	if m := slicesRe.Get().FindStringSubmatch(comment); m != nil {
		st.slices = strings.Fields(m[1])
	}
	return st
}

// text is the comment recording st.
func (st sliceState) text(workloadName string) string {
	c := markComment(workloadName)
	if len(st.slices) > 0 {
		c += "; slices " + strings.Join(st.slices, " ")
	}
	if st.keysBuilt {
		c += "; keys built"
	}
	return c
}

func initSlice(ctx context.Context, dial target.Dialer, w workload.Workload, s workload.Slice, opts Options) (Stats, error) {
	start := time.Now()
	var st Stats
	if !sliceNameRe.Get().MatchString(s.Name) {
		return st, fmt.Errorf("slice name %q: letters, digits and '-' only", s.Name)
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
	lockKey := "pgarena load " + w.Meta().Name

	if err := refuseReload(ctx, conn, w, tables); err != nil {
		return st, err
	}

	opts.Progress.Phase("create tables")
	t0 := time.Now()
	if err := createShared(ctx, conn, w, tables, lockKey); err != nil {
		return st, err
	}
	st.Create = time.Since(t0)

	opts.Progress.Phase("load")
	t0 = time.Now()
	jobs := loadJobs(tables, func(*workload.Table) jobMode { return jobSlice }, s.Clear, opts.Progress)
	conns := []*pgx.Conn{conn}
	defer func() {
		for _, c := range conns[1:] {
			closeConn(c)
		}
	}()
	if conns, err = dialMore(ctx, dial, conns, min(opts.Workers, max(len(jobs), 1))); err != nil {
		return st, err
	}
	if st.Rows, err = load(ctx, conns, jobs, opts.Progress); err != nil {
		return st, err
	}
	st.Load = time.Since(t0)

	t0 = time.Now()
	built, err := recordSlice(ctx, conn, w, tables, s, lockKey, opts.Progress)
	if err != nil {
		return st, err
	}
	st.PostLoad = time.Since(t0)
	st.Slice = &SliceStats{KeysBuilt: built}
	if built {
		opts.Progress.Phase("vacuum analyze")
		t0 = time.Now()
		if err := vacuumAll(ctx, conns, tables); err != nil {
			return st, err
		}
		st.Vacuum = time.Since(t0)
	}
	st.Total = time.Since(start)
	return st, nil
}

// lockSlices takes the slices' advisory lock for the current transaction,
// waiting at most sliceLockTimeout.
func lockSlices(ctx context.Context, conn *pgx.Conn, key string) error {
	if err := execSQL(ctx, conn, fmt.Sprintf("set local lock_timeout = '%dms'", sliceLockTimeout.Milliseconds())); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "select pg_advisory_xact_lock(hashtext($1))", key); err != nil {
		return fmt.Errorf("wait for the other slices' loaders: %w", err)
	}
	return nil
}

// createShared creates the tables unless another slice did: all of them
// must exist, marked, or none.
func createShared(ctx context.Context, conn *pgx.Conn, w workload.Workload, tables []workload.Table, key string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("create tables: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
	if err := lockSlices(ctx, conn, key); err != nil {
		return err
	}
	rels, err := relations(ctx, conn, w)
	if err != nil {
		return err
	}
	fns, err := functions(ctx, conn, w)
	if err != nil {
		return err
	}
	if fe := foreignError(rels, fns); fe != nil {
		return fe
	}
	var have, missing []string
	for _, r := range rels {
		if r.exists {
			have = append(have, r.name)
		} else {
			missing = append(missing, r.name)
		}
	}
	switch {
	case len(missing) == 0:
		return tx.Commit(ctx) // another slice created them
	case len(have) > 0:
		return fmt.Errorf("tables %s exist but %s do not: drop %s first (pgarena drop %s)",
			strings.Join(have, ", "), strings.Join(missing, ", "), w.Meta().Name, w.Meta().Name)
	}
	for i := range tables {
		if err := createMarked(ctx, conn, &tables[i], w.Meta().Name); err != nil {
			return err
		}
	}
	if _, err := distribute(ctx, conn, w); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create tables: %w", err)
	}
	return nil
}

// refuseReload refuses a slice once the set's foreign keys are built:
// deleting its rows would break the other slices' rows that refer to
// them (tpch's lineitem to part), and the keys are not deferrable.
func refuseReload(ctx context.Context, conn *pgx.Conn, w workload.Workload, tables []workload.Table) error {
	fks := false
	for _, t := range tables {
		fks = fks || slices.ContainsFunc(t.PostLoad, isForeignKey)
	}
	if !fks {
		return nil
	}
	var comment string
	if err := conn.QueryRow(ctx, "select coalesce(obj_description(to_regclass($1), 'pg_class'), '')", tables[0].Name).Scan(&comment); err != nil {
		return fmt.Errorf("read the slices loaded: %w", err)
	}
	if parseSliceState(comment).keysBuilt {
		name := w.Meta().Name
		return &workload.InputError{Msg: fmt.Sprintf("%s is loaded in full and its foreign keys are built: a slice cannot be loaded again (the other slices' rows refer to its rows); to load again, pgarena drop %s first", name, name)}
	}
	return nil
}

// recordSlice records s as loaded and, if that completes the set and the
// keys are not built yet, builds them in the same transaction. It reports
// whether it built them.
func recordSlice(ctx context.Context, conn *pgx.Conn, w workload.Workload, tables []workload.Table, s workload.Slice, key string, progress Progress) (bool, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("record slice: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
	if err := lockSlices(ctx, conn, key); err != nil {
		return false, err
	}
	first := tables[0].Name
	var comment string
	if err := conn.QueryRow(ctx, "select coalesce(obj_description(to_regclass($1), 'pg_class'), '')", first).Scan(&comment); err != nil {
		return false, fmt.Errorf("record slice: %w", err)
	}
	if !strings.HasPrefix(comment, markPrefix) {
		return false, fmt.Errorf("table %s lost pgarena's mark while loading", first)
	}
	st := parseSliceState(comment)
	if !slices.Contains(st.slices, s.Name) {
		st.slices = append(st.slices, s.Name)
	}
	build := !st.keysBuilt && s.Complete(st.slices)
	if build {
		progress.Phase("primary keys")
		// One connection, in this transaction: keys and the record of
		// them commit together.
		// (the foreign keys after every table's keys)
		for _, fks := range []bool{false, true} {
			for _, t := range tables {
				for _, stmt := range t.PostLoad {
					if isForeignKey(stmt) == fks {
						if err := execSQL(ctx, conn, stmt); err != nil {
							return false, fmt.Errorf("%s: %s: %w", t.Name, stmt, err)
						}
					}
				}
			}
		}
		if err := markFunctions(ctx, conn, w); err != nil {
			return false, err
		}
		st.keysBuilt = true
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("comment on table %s is %s", first,
		quoteLiteral(st.text(w.Meta().Name)))); err != nil {
		return false, fmt.Errorf("record slice: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("record slice: %w", err)
	}
	return build, nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
