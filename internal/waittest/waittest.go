// Package waittest is how tests wait for a condition: bounded, polled
// every Poll, failing the test with what it awaited and what it saw last
// when the deadline passes (internal/await's wait, with t.Logf for its
// progress lines). Tests wait for conditions, never fixed sleeps.
package waittest

import (
	"context"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/await"
)

// Poll is how often a condition is checked.
const Poll = 20 * time.Millisecond

// Until calls check every Poll until it reports done, and fails the test
// (t.Fatal) when timeout passes first, with what (a noun phrase: "4
// sessions waiting for the lock") and check's last status ("2 wait").
// check runs on the test's goroutine and may fail the test itself.
func Until(t testing.TB, what string, timeout time.Duration, check func() (done bool, status string)) {
	t.Helper()
	w := await.Wait{What: what, Timeout: timeout, Notef: func(format string, args ...any) { t.Logf(format, args...) }}
	err := w.Poll(context.Background(), Poll, func(context.Context) (bool, string, error) {
		done, status := check()
		return done, status, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
