package sysbench

import (
	"fmt"

	"github.com/pgarena/pgarena/internal/workload"
)

// Loading in slices (workload.Slicer, init --segment i/N, pgarena k8s
// init): every table's ids 1..--table-size split into N ranges of whole
// batches, slice i loading range i of every table. A batch is a pure
// function of (seed, table, batch), so the slices together load exactly the
// rows one init loads, and the slice completing the set builds the keys.

// SliceOf implements workload.Slicer.
func (w *Workload) SliceOf(i, n int) error {
	batches := (int64(w.tableSize) + batchRows - 1) / batchRows
	switch {
	case w.test == TestInsert && !w.autoInc:
		return fmt.Errorf("oltp_insert with --auto-inc=off starts from empty tables: nothing to load in slices")
	case int64(n) > batches:
		return fmt.Errorf("%d slices of %d rows: give at most %d pods (a slice is whole batches of %d rows), or more rows", n, w.tableSize, batches, batchRows)
	case i < 0 || i >= n:
		return fmt.Errorf("slice %d of %d does not exist", i, n)
	}
	w.sliceLo, w.sliceHi = int(int64(i)*batches/int64(n)), int((int64(i)+1)*batches/int64(n))
	w.sliced = true
	return nil
}

// ids is the id range [first, last] of batches [lo, hi).
func (w *Workload) ids(lo, hi int) (first, last int64) {
	return int64(lo)*batchRows + 1, min(int64(hi)*batchRows, int64(w.tableSize))
}

// Slice implements workload.Slicer.
func (w *Workload) Slice() (workload.Slice, bool) {
	if !w.sliced {
		return workload.Slice{}, false
	}
	first, last := w.ids(w.sliceLo, w.sliceHi)
	size := int64(w.tableSize)
	return workload.Slice{
		Name: fmt.Sprintf("%d-%d", first, last),
		Clear: func(table string) string {
			return fmt.Sprintf("DELETE FROM %s WHERE id BETWEEN %d AND %d", table, first, last)
		},
		Complete: func(names []string) bool { return workload.SlicesCover(names, 1, size) },
	}, true
}

// sliceRows narrows a table's batches to the slice's.
func (w *Workload) sliceRows(b workload.Batches) workload.Batches {
	if !w.sliced || b.N == 0 {
		return b
	}
	lo, hi := w.sliceLo, w.sliceHi
	first, last := w.ids(lo, hi)
	fill := b.Fill
	return workload.Batches{N: hi - lo, Rows: last - first + 1,
		Fill: func(i int, dst [][]any) [][]any { return fill(lo+i, dst) }}
}
