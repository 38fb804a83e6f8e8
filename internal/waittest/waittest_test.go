package waittest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what a wait reports and stops the
// wait's goroutine as t.Fatal does.
type recorder struct {
	testing.TB
	logs   []string
	failed string
}

func (r *recorder) Helper()                    {}
func (r *recorder) Logf(f string, args ...any) { r.logs = append(r.logs, fmt.Sprintf(f, args...)) }
func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	panic(r)
}

func run(r *recorder, f func()) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	f()
}

// TestUntil: a condition that comes true ends the wait; one that does not
// fails the test after the deadline with what was awaited and the last
// status seen.
func TestUntil(t *testing.T) {
	n := 0
	Until(t, "the third check", time.Minute, func() (bool, string) { n++; return n == 3, "" })
	if n != 3 {
		t.Errorf("checked %d times, want 3", n)
	}

	r := &recorder{TB: t}
	start := time.Now()
	run(r, func() {
		i := 0
		Until(r, "a condition that never holds", 200*time.Millisecond, func() (bool, string) { i++; return false, fmt.Sprintf("check %d", i) })
	})
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("failed after %s, before its deadline", took)
	}
	if !strings.HasPrefix(r.failed, "a condition that never holds did not happen within 200ms: check ") {
		t.Errorf("failure %q: want what was awaited, the deadline and the last status", r.failed)
	}
}
