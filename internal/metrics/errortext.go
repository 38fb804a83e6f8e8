package metrics

import (
	"encoding/json"
	"sort"

	"github.com/pgarena/pgarena/internal/pgerr"
)

// sameText reports whether d and o said the same thing (ignoring when).
func sameText(d, o *pgerr.ErrorDetail) bool {
	return d.Severity == o.Severity && d.SQLState == o.SQLState && d.Message == o.Message && d.Detail == o.Detail && d.Hint == o.Hint
}

// ErrorExample is the first and the last failure of one class (of one
// transaction type, in one interval or a whole run).
type ErrorExample struct {
	Class pgerr.ErrorClass  `json:"class"`
	First pgerr.ErrorDetail `json:"first"`
	Last  pgerr.ErrorDetail `json:"last"`
}

// SameText reports whether the first and last failure said the same thing.
func (e *ErrorExample) SameText() bool { return sameText(&e.First, &e.Last) }

// ErrorExamples holds at most one ErrorExample per class, ordered by class.
// Nil when nothing failed.
type ErrorExamples []ErrorExample

// Note keeps d as the last failure of class c, and as its first if it is
// the first.
func (e *ErrorExamples) Note(c pgerr.ErrorClass, d pgerr.ErrorDetail) {
	e.merge(ErrorExample{Class: c, First: d, Last: d})
}

// Merge merges o into e: per class, the earlier first and the later last.
func (e *ErrorExamples) Merge(o ErrorExamples) {
	for _, x := range o {
		e.merge(x)
	}
}

func (e *ErrorExamples) merge(x ErrorExample) {
	l := *e
	i := sort.Search(len(l), func(i int) bool { return l[i].Class >= x.Class })
	if i < len(l) && l[i].Class == x.Class {
		if x.First.Time.Before(l[i].First.Time) {
			l[i].First = x.First
		}
		if !x.Last.Time.Before(l[i].Last.Time) {
			l[i].Last = x.Last
		}
		return
	}
	l = append(l, ErrorExample{})
	copy(l[i+1:], l[i:])
	l[i] = x
	*e = l
}

// Get returns the example of class c.
func (e ErrorExamples) Get(c pgerr.ErrorClass) (ErrorExample, bool) {
	for _, x := range e {
		if x.Class == c {
			return x, true
		}
	}
	return ErrorExample{}, false
}

// UnmarshalJSON reads a list written by a pgarena that may order or name
// classes differently (an unknown class reads as other): examples of one
// class are merged.
func (e *ErrorExamples) UnmarshalJSON(b []byte) error {
	var l []ErrorExample
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*e = nil
	for _, x := range l {
		e.merge(x)
	}
	return nil
}
