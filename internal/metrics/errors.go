package metrics

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pgarena/pgarena/internal/pgerr"
)

// ErrorCounts counts failures by class. Index pgerr.ClassNone is unused.
type ErrorCounts [pgerr.NumClasses]int64

// Total is the number of failures over all classes.
func (e *ErrorCounts) Total() int64 {
	var n int64
	for c := 1; c < pgerr.NumClasses; c++ {
		n += e[c]
	}
	return n
}

// Add adds o to e.
func (e *ErrorCounts) Add(o *ErrorCounts) {
	for c := range e {
		e[c] += o[c]
	}
}

// MarshalJSON writes the non-zero classes as an object keyed by class name.
func (e ErrorCounts) MarshalJSON() ([]byte, error) {
	m := make(map[string]int64)
	for c := 1; c < pgerr.NumClasses; c++ {
		if e[c] != 0 {
			m[pgerr.ErrorClass(c).String()] = e[c]
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the object written by MarshalJSON; unknown class
// names (from a newer pgarena) are counted as other.
func (e *ErrorCounts) UnmarshalJSON(b []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*e = ErrorCounts{}
	for k, v := range m {
		c, ok := pgerr.ParseErrorClass(k)
		if !ok || c == pgerr.ClassNone {
			c = pgerr.ClassOther
		}
		e[c] += v
	}
	return nil
}

// BySize lists the classes with failures, the most frequent first.
func (e *ErrorCounts) BySize() []pgerr.ErrorClass {
	var l []pgerr.ErrorClass
	for c := 1; c < pgerr.NumClasses; c++ {
		if e[c] > 0 {
			l = append(l, pgerr.ErrorClass(c))
		}
	}
	sort.SliceStable(l, func(i, j int) bool { return e[l[i]] > e[l[j]] })
	return l
}

// List renders the failures by class, the most frequent first:
// "deadlock 2, other 1".
func (e *ErrorCounts) List() string {
	l := e.BySize()
	parts := make([]string, len(l))
	for i, c := range l {
		parts[i] = fmt.Sprintf("%s %d", c, e[c])
	}
	return strings.Join(parts, ", ")
}
