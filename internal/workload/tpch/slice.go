package tpch

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/tpch/dbgen"
)

// Loading in slices (workload.Slicer, init --segment i/N, pgarena k8s
// init): slice i of N loads chunks [⌈i·C/N⌉, ⌈(i+1)·C/N⌉) of every table
// of C chunks, so a table of fewer chunks than slices (nation, region and
// tpch_state are one) is loaded by the first slices only, slice 0 for a
// one-chunk table. A chunk is a pure function of (scale, table, chunk)
// (dbgen.Write), so the slices together load exactly the rows one init
// loads. A slice's rows of a table are those whose first column lies in
// its chunks' range (dbgen.Keys: keys grow with dbgen's row), which Clear
// deletes; tpch_state's one row is slice 0's. The slice completing the set
// builds the keys.

// SliceOf implements workload.Slicer.
func (w *Workload) SliceOf(i, n int) error {
	most := chunks(w.generator(), dbgen.LineItem)
	switch {
	case n > most:
		return fmt.Errorf("%d slices of scale %g: give at most %d pods (a slice is whole chunks of %d orders), or a larger --scale", n, w.scale, most, chunkRows)
	case i < 0 || i >= n:
		return fmt.Errorf("slice %d of %d does not exist", i, n)
	}
	w.sliceI, w.sliceN = i, n
	return nil
}

// chunks is the number of chunks (batches) of t.
func chunks(g *dbgen.Generator, t dbgen.Table) int {
	return int((g.BaseRows(t) + chunkRows - 1) / chunkRows)
}

// sliceChunks is slice i of n's chunks [lo, hi) of a table of c chunks.
func sliceChunks(i, n, c int) (lo, hi int) {
	return (i*c + n - 1) / n, ((i+1)*c + n - 1) / n
}

// sliceRows is slice i of n's base rows [from, to) of t.
func sliceRows(g *dbgen.Generator, t dbgen.Table, i, n int) (from, to int64) {
	lo, hi := sliceChunks(i, n, chunks(g, t))
	base := g.BaseRows(t)
	return min(int64(lo)*chunkRows, base), min(int64(hi)*chunkRows, base)
}

// Slice implements workload.Slicer.
func (w *Workload) Slice() (workload.Slice, bool) {
	if w.sliceN == 0 {
		return workload.Slice{}, false
	}
	g, i, n := w.generator(), w.sliceI, w.sliceN
	return workload.Slice{
		Name: fmt.Sprintf("%dof%d", i, n),
		Clear: func(table string) string {
			if table == stateTable {
				if i > 0 {
					return ""
				}
				return "delete from " + stateTable
			}
			t, err := dbgen.ParseTable(table)
			if err != nil {
				return ""
			}
			from, to := sliceRows(g, t, i, n)
			if from == to {
				return ""
			}
			first, last := g.Keys(t, from, to)
			return fmt.Sprintf("delete from %s where %s between %d and %d", table, columns.Get()[t][0][0], first, last)
		},
		Complete: func(names []string) bool { return coversChunks(g, names) },
	}, true
}

var sliceNameRe = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^(\d+)of(\d+)$`) }}

// coversChunks reports whether the slices named "IofN" cover every chunk
// of every table (slices of different splits may overlap).
func coversChunks(g *dbgen.Generator, names []string) bool {
	type slice struct{ i, n int }
	var got []slice
	for _, name := range names {
		m := sliceNameRe.Get().FindStringSubmatch(name)
		if m == nil {
			continue
		}
		i, err1 := strconv.Atoi(m[1])
		n, err2 := strconv.Atoi(m[2])
		if err1 == nil && err2 == nil && i < n {
			got = append(got, slice{i, n})
		}
	}
	counts := []int{1} // tpch_state
	for _, t := range dbgen.Tables {
		counts = append(counts, chunks(g, t))
	}
	for _, c := range counts {
		covered := make([]bool, c)
		for _, s := range got {
			lo, hi := sliceChunks(s.i, s.n, c)
			for k := lo; k < hi; k++ {
				covered[k] = true
			}
		}
		for _, ok := range covered {
			if !ok {
				return false
			}
		}
	}
	return true
}

// narrow narrows the tables' batches to the slice's.
func (w *Workload) narrow(tables []workload.Table) []workload.Table {
	if w.sliceN == 0 {
		return tables
	}
	g, i, n := w.generator(), w.sliceI, w.sliceN
	for k := range tables {
		b := &tables[k].Rows
		lo, hi := sliceChunks(i, n, b.N)
		if t, err := dbgen.ParseTable(tables[k].Name); err == nil {
			// the estimate scaled to the slice's base rows
			from, to := sliceRows(g, t, i, n)
			b.Rows = b.Rows * (to - from) / max(g.BaseRows(t), 1)
		} else if lo == hi {
			b.Rows = 0
		}
		b.N = hi - lo
		if text := b.Text; text != nil {
			b.Text = func(j int, dst []byte) ([]byte, int64, error) { return text(lo+j, dst) }
		}
		if fill := b.Fill; fill != nil {
			b.Fill = func(j int, dst [][]any) [][]any { return fill(lo+j, dst) }
		}
	}
	return tables
}
