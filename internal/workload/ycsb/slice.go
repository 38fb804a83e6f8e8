package ycsb

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	type span struct{ lo, hi int64 }
	var spans []span
	for _, n := range names {
		a, b, ok := strings.Cut(n, "-")
		lo, err1 := strconv.ParseInt(a, 10, 64)
		hi, err2 := strconv.ParseInt(b, 10, 64)
		if ok && err1 == nil && err2 == nil && lo <= hi {
			spans = append(spans, span{lo, hi})
		}
	}
	slices.SortFunc(spans, func(x, y span) int { return int(min(max(x.lo-y.lo, -1), 1)) })
	next := int64(0) // the lowest key number not covered yet
	for _, s := range spans {
		if s.lo > next {
			return false
		}
		next = max(next, s.hi+1)
	}
	return next >= records
}

// keysSQL is a query of the keys (keyName) of the key numbers first..last:
// "user", the key number (hashed: FNV-64 computed in numeric, byte by byte
// as fnv64 does, then made non-negative as Java's Math.abs, which leaves
// -2^63 as it is), padded with zeros to --zero-padding digits.
func (w *Workload) keysSQL(first, last int64) string {
	from := fmt.Sprintf("generate_series(%d::bigint, %d) k", first, last)
	num := "k::text"
	if w.insertOrder == orderHashed {
		// h = (h xor byte) * prime mod 2^64 over the 8 bytes of k, lowest
		// first; the xor touches the low byte of h only
		prev := "14695981039346656037::numeric"
		for i := range 8 {
			from += fmt.Sprintf(", LATERAL (SELECT mod((%[1]s - mod(%[1]s, 256) + (mod(%[1]s, 256)::int # ((k >> %[2]d) & 255)::int)) * 1099511628211, 18446744073709551616) AS h%[3]d) r%[3]d",
				prev, 8*i, i+1)
			prev = fmt.Sprintf("h%d", i+1)
		}
		num = "(CASE WHEN h8 > 9223372036854775808 THEN 18446744073709551616 - h8 WHEN h8 = 9223372036854775808 THEN -h8 ELSE h8 END)::text"
	}
	key := "'user' || " + num
	if w.zeroPadding > 1 {
		from += ", LATERAL (SELECT " + num + " AS n) p"
		key = fmt.Sprintf("'user' || repeat('0', %d - length(n)) || n", w.zeroPadding)
	}
	return "SELECT " + key + " FROM " + from
}
