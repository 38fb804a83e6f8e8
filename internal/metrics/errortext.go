package metrics

import (
	"encoding/json"
	"sort"
	"time"
)

// maxDetailText bounds each text field of an ErrorDetail (a detail can quote
// a whole row), so that a failing run's intervals stay small.
const maxDetailText = 500

// ErrorDetail is what one failure said: the server's SQLSTATE, message,
// detail and hint, or the client's message for a failure without a server
// error (a refused connection). It is kept only for failures.
type ErrorDetail struct {
	Time     time.Time `json:"time"`
	Severity string    `json:"severity,omitempty"` // ERROR, FATAL, PANIC
	SQLState string    `json:"sqlstate,omitempty"`
	Message  string    `json:"message"`
	Detail   string    `json:"detail,omitempty"`
	Hint     string    `json:"hint,omitempty"`
}

// Bounded returns d with each text field cut to a bounded length.
func (d ErrorDetail) Bounded() ErrorDetail {
	d.Message, d.Detail, d.Hint = cut(d.Message), cut(d.Detail), cut(d.Hint)
	return d
}

func cut(s string) string {
	if len(s) <= maxDetailText {
		return s
	}
	// Cut at a rune boundary.
	i := maxDetailText
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// sameText reports whether d and o said the same thing (ignoring when).
func (d *ErrorDetail) sameText(o *ErrorDetail) bool {
	return d.Severity == o.Severity && d.SQLState == o.SQLState && d.Message == o.Message && d.Detail == o.Detail && d.Hint == o.Hint
}

// ErrorExample is the first and the last failure of one class (of one
// transaction type, in one interval or a whole run).
type ErrorExample struct {
	Class ErrorClass  `json:"class"`
	First ErrorDetail `json:"first"`
	Last  ErrorDetail `json:"last"`
}

// SameText reports whether the first and last failure said the same thing.
func (e *ErrorExample) SameText() bool { return e.First.sameText(&e.Last) }

// ErrorExamples holds at most one ErrorExample per class, ordered by class.
// Nil when nothing failed.
type ErrorExamples []ErrorExample

// Note keeps d as the last failure of class c, and as its first if it is
// the first.
func (e *ErrorExamples) Note(c ErrorClass, d ErrorDetail) {
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
func (e ErrorExamples) Get(c ErrorClass) (ErrorExample, bool) {
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
