package pgerr

import "time"

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
