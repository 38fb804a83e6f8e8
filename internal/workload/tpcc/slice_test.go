package tpcc

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
)

// cancelAfter is a loader.Progress that cancels the load once rows were
// sent.
type cancelAfter struct {
	rows   atomic.Int64
	limit  int64
	cancel context.CancelFunc
}

func (p *cancelAfter) Begin([]loader.TableRows) {}
func (p *cancelAfter) TableDone(int, int64)     {}
func (p *cancelAfter) Phase(string)             {}
func (p *cancelAfter) Add(_ int, n int64) {
	if p.rows.Add(n) >= p.limit {
		p.cancel()
	}
}

// TestWarehouseRange loads 2 warehouses as two slices (--warehouse-range),
// the second interrupted once and loaded again, and expects the keys built
// by the slice that completes the set, the counts of clause 4.3.3.1, the
// consistency conditions, and the very rows of a whole load.
func TestWarehouseRange(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	dial := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) }
	conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	loadSlice := func(ctx context.Context, args ...string) (loader.Stats, error) {
		return loader.Init(ctx, dial, newWorkload(t, append([]string{"-w", "2"}, args...)...), loader.Options{Workers: 2})
	}

	st, err := loadSlice(ctx, "--warehouse-range", "2-2")
	if err != nil {
		t.Fatal(err)
	}
	if st.Slice == nil || st.Slice.KeysBuilt {
		t.Fatalf("first slice: %+v, want a slice without keys", st.Slice)
	}
	if n := count(t, conn, "select count(*) from pg_indexes where tablename in ('warehouse', 'stock')"); n != 0 {
		t.Errorf("%d indexes after one slice of two, want none yet", n)
	}
	if n := count(t, conn, "select count(*) from item"); n != 0 {
		t.Errorf("item has %d rows after slice 2-2, want 0 (the slice of warehouse 1 loads it)", n)
	}
	want := "tpcc: the load by --warehouse-range is incomplete (loaded: 2-2): load the missing warehouses first"
	if err := newWorkload(t).Prepare(ctx, conn); err == nil || err.Error() != want {
		t.Errorf("Prepare on an incomplete set = %v, want %q", err, want)
	}

	// Interrupted, then loaded again: the slice ends with exactly its rows.
	cctx, cancel := context.WithCancel(ctx)
	_, err = loader.Init(cctx, dial, newWorkload(t, "-w", "2", "--warehouse-range", "1-1"),
		loader.Options{Workers: 2, Progress: &cancelAfter{limit: 150000, cancel: cancel}})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted slice: %v, want context.Canceled", err)
	}
	st, err = loadSlice(ctx, "--warehouse-range", "1-1")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Slice.KeysBuilt {
		t.Fatal("the slice completing the set did not build the keys")
	}
	checkRowCounts(t, conn, 2)
	w := newWorkload(t, "-w", "2")
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx, conn); err != nil {
		t.Fatalf("Check after the slices: %v", err)
	}
	// A slice loaded again into the keyed set replaces its rows.
	if st, err = loadSlice(ctx, "--warehouse-range", "2-2"); err != nil || st.Slice.KeysBuilt {
		t.Fatalf("slice 2-2 again: %v, %+v", err, st.Slice)
	}
	checkRowCounts(t, conn, 2)

	// The same rows as a whole load.
	whole := pgtest.Connect(t, loadertest.Loaded(t, newWorkload(t, "-w", "2")), pgx.QueryExecModeSimpleProtocol)
	for _, table := range tableNames {
		q := "select coalesce(sum(hashtext(t::text)::bigint), 0) from " + table + " t"
		if a, b := count(t, conn, q), count(t, whole, q); a != b {
			t.Errorf("%s: rows of the slices differ from a whole load's", table)
		}
	}
}

func TestWarehouseRangeBadInput(t *testing.T) {
	for _, r := range []string{"0-1", "2-1", "1-3", "x", "1-", "-2"} {
		w := New()
		if err := w.Flags().Parse([]string{"-w", "2", "--warehouse-range", r}); err != nil {
			t.Fatal(err)
		}
		want := `--warehouse-range "` + r + `": want FROM-TO with 1 <= FROM <= TO <= --warehouses (2)`
		if err := w.Validate(); err == nil || err.Error() != want {
			t.Errorf("%s: Validate = %v, want %q", r, err, want)
		}
	}
}
