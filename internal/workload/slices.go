package workload

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// SlicesCover reports whether slices named "FIRST-LAST" (inclusive
// numbers, as Slice.Name gives them) cover first..last: the Complete of
// slicers that split a range of ids or key numbers. Slices of different
// splits may overlap; names of another form are ignored.
func SlicesCover(names []string, first, last int64) bool {
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
	slices.SortFunc(spans, func(x, y span) int { return cmp.Compare(x.lo, y.lo) })
	next := first // the lowest number not covered yet
	for _, s := range spans {
		if s.lo > next {
			return false
		}
		next = max(next, s.hi+1)
	}
	return next > last
}
