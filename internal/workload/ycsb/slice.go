package ycsb

import (
	"fmt"

	"github.com/pgarena/pgarena/internal/workload"
)

// YCSB's insertstart and insertcount split a load over several YCSB
// instances: each loads the key numbers [insertstart, insertstart +
// insertcount) of recordcount, and insertstart + insertcount must not
// pass recordcount. pgarena's init does the same as a load slice
// (workload.Slicer, internal/loader/slice.go): the loaders share
// usertable, the one that completes 0..records-1 builds the primary key,
// and a slice loaded again replaces its rows. Every slice makes exactly
// the rows a whole load makes for its key numbers (a row is a function of
// the seed and its key number), so the slices together are the whole
// load.
//
// This is the load only. For a run over several processes, --segment
// (and --agents) split the clients and give each segment its own stripe
// of new key numbers (keyspace.go); YCSB's run-time use of insertstart
// and insertcount (each instance drawing keys from its own range, all
// inserting from recordcount on, so that parallel instances collide) is
// not followed.

// validateInsertRange checks --insert-start and --insert-count against
// --records and fills in the count's default (the rest of the records).
func (w *Workload) validateInsertRange() error {
	if !w.flags.Changed("insert-count") {
		w.insertCount = w.records - w.insertStart
	}
	switch {
	case w.insertStart < 0 || w.insertStart >= w.records:
		return fmt.Errorf("--insert-start must be between 0 and --records - 1 (%d) (got %d)", w.records-1, w.insertStart)
	case w.insertCount < 1:
		return fmt.Errorf("--insert-count must be at least 1 (got %d)", w.insertCount)
	case w.insertStart+w.insertCount > w.records:
		return fmt.Errorf("--insert-start %d + --insert-count %d pass --records %d: a loader loads key numbers of 0..records-1 only, as YCSB requires",
			w.insertStart, w.insertCount, w.records)
	}
	return nil
}

// SliceOf implements workload.Slicer: key numbers 0..records-1 split into
// n ranges whose sizes differ by at most one.
func (w *Workload) SliceOf(i, n int) error {
	switch {
	case w.flags.Changed("insert-start") || w.flags.Changed("insert-count"):
		return fmt.Errorf("give either --segment or --insert-start/--insert-count, not both")
	case n > w.records:
		return fmt.Errorf("%d slices of %d records: give at most %d pods, or more records", n, w.records, w.records)
	case i < 0 || i >= n:
		return fmt.Errorf("slice %d of %d does not exist", i, n)
	}
	w.insertStart = i * w.records / n
	w.insertCount = (i+1)*w.records/n - w.insertStart
	return nil
}

// Slice implements workload.Slicer: with --insert-start/--insert-count
// short of all the records, init loads that range, named
// "FIRST-LAST" (key numbers, inclusive).
func (w *Workload) Slice() (workload.Slice, bool) {
	if w.insertStart == 0 && w.insertCount == w.records {
		return workload.Slice{}, false
	}
	first, last := int64(w.insertStart), int64(w.insertStart+w.insertCount-1)
	records := int64(w.records)
	return workload.Slice{
		Name: fmt.Sprintf("%d-%d", first, last),
		Clear: func(t string) string {
			if t != table {
				return ""
			}
			return "DELETE FROM " + table + " WHERE ycsb_key IN (" + w.keysSQL(first, last) + ")"
		},
		Complete: func(names []string) bool { return coversRecords(names, records) },
	}, true
}

// coversRecords reports whether slices named "FIRST-LAST" cover the key
// numbers 0..records-1.
func coversRecords(names []string, records int64) bool {
	return workload.SlicesCover(names, 0, records-1)
}

// keysSQL is a query of the keys (keyName) of the key numbers first..last:
// "user", the key number (hashed: fnv64 in SQL), padded with zeros to
// --zero-padding digits.
//
// FNV-64 multiplies modulo 2^64, past bigint, so the hash is kept as two
// 32-bit halves hi and lo: with the prime 2^40 + 435, h*prime mod 2^64 is
// lo' = (435 lo) mod 2^32 and hi' = (435 hi + (435 lo >> 32) + (lo << 8))
// mod 2^32, and the xor of a byte touches lo only. Each of the 8 steps is
// a LATERAL subquery fenced by OFFSET 0: pulled up, every step would
// repeat the previous one's expression. The result is made signed and
// non-negative as Java's Math.abs does (which leaves -2^63 as it is).
func (w *Workload) keysSQL(first, last int64) string {
	from := fmt.Sprintf("generate_series(%d::bigint, %d) k", first, last)
	num := "k::text"
	if w.insertOrder == orderHashed {
		const mask = "4294967295"
		hi, lo := "3421674724::bigint", "2216829733::bigint" // the offset basis 0xCBF29CE484222325
		for i := range 8 {
			x := fmt.Sprintf("(%s # ((k >> %d) & 255))", lo, 8*i)
			from += fmt.Sprintf(", LATERAL (SELECT (435 * %[1]s) & %[2]s AS lo%[3]d, (435 * %[4]s + ((435 * %[1]s) >> 32) + ((%[1]s & 16777215) << 8)) & %[2]s AS hi%[3]d OFFSET 0) r%[3]d",
				x, mask, i+1, hi)
			hi, lo = fmt.Sprintf("hi%d", i+1), fmt.Sprintf("lo%d", i+1)
		}
		from += ", LATERAL (SELECT CASE WHEN hi8 < 2147483648 THEN (hi8 << 32) | lo8 ELSE (hi8 - 4294967296) * 4294967296 + lo8 END AS s OFFSET 0) f"
		num = "(CASE WHEN s = -9223372036854775808 THEN s ELSE abs(s) END)::text"
	}
	key := "'user' || " + num
	if w.zeroPadding > 1 {
		from += ", LATERAL (SELECT " + num + " AS n OFFSET 0) p"
		key = fmt.Sprintf("'user' || repeat('0', %d - length(n)) || n", w.zeroPadding)
	}
	return "SELECT " + key + " FROM " + from
}
