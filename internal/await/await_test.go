package await

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/clock"
)

// notes collects progress lines with the fake time they came at.
type notes struct {
	mu    sync.Mutex
	clk   clock.Clock
	start time.Time
	lines []string
	at    []time.Duration
}

func (n *notes) notef(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, fmt.Sprintf(format, args...))
	n.at = append(n.at, n.clk.Now().Sub(n.start))
}

// TestPollReportsEveryFiveSeconds: a wait that never ends reports what it
// waits for, how long so far, the deadline and the flag that sets it, and
// what it sees, first after a second and then at most Every apart, and
// ends at its deadline with an error saying the same.
func TestPollReportsEveryFiveSeconds(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	n := &notes{clk: clk, start: start}
	w := Wait{What: "the test's event", Timeout: 21 * time.Second, Flag: "--test-timeout", Notef: n.notef, Clock: clk}
	errc := make(chan error, 1)
	go func() {
		errc <- w.Poll(context.Background(), 100*time.Millisecond, func(context.Context) (bool, string, error) {
			return false, "the server says: ERROR: no", nil
		})
	}()
	var err error
	for done := false; !done; {
		select {
		case err = <-errc:
			done = true
		default:
			bctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			if clk.BlockUntil(bctx, 1) == nil {
				clk.Advance(100 * time.Millisecond)
			}
			cancel()
		}
	}
	var de *DeadlineError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "the test's event did not happen within 21s (--test-timeout): the server says: ERROR: no") {
		t.Fatalf("error: %v", err)
	}
	if len(n.lines) < 4 {
		t.Fatalf("%d progress lines in 21 s: %q", len(n.lines), n.lines)
	}
	if n.at[0] > First+100*time.Millisecond {
		t.Errorf("first report after %s, want about %s", n.at[0], First)
	}
	for i := 1; i < len(n.at); i++ {
		if gap := n.at[i] - n.at[i-1]; gap > Every+100*time.Millisecond {
			t.Errorf("reports %s apart (%q, %q), want at most %s", gap, n.lines[i-1], n.lines[i], Every)
		}
	}
	want := "waiting for the test's event: 6s so far, deadline 21s (--test-timeout); the server says: ERROR: no"
	if n.lines[1] != want {
		t.Errorf("second report %q, want %q", n.lines[1], want)
	}
}

// TestPollQuietWhenQuick: a wait that ends within First prints nothing.
func TestPollQuietWhenQuick(t *testing.T) {
	n := &notes{clk: clock.Real(), start: time.Now()}
	calls := 0
	err := Wait{What: "x", Timeout: time.Minute, Notef: n.notef}.Poll(context.Background(), time.Millisecond, func(context.Context) (bool, string, error) {
		calls++
		return calls == 3, "", nil
	})
	if err != nil || len(n.lines) != 0 {
		t.Fatalf("err %v, lines %q", err, n.lines)
	}
}

// TestDuringReports: while a call that waits itself runs, its progress is
// reported first after a second, then every Every.
func TestDuringReports(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	n := &notes{clk: clk, start: start}
	release := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- Wait{What: "the server to start", Timeout: time.Minute, Notef: n.notef, Clock: clk}.During(
			func() string { return "its log: LOG:  redo starts" },
			func() error { <-release; return errors.New("done") })
	}()
	for clk.Now().Sub(start) < 12*time.Second {
		bctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := clk.BlockUntil(bctx, 1); err != nil {
			t.Fatal(err)
		}
		cancel()
		clk.Advance(500 * time.Millisecond)
	}
	close(release)
	if err := <-errc; err == nil || err.Error() != "done" {
		t.Fatalf("error %v", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	want := []string{
		"waiting for the server to start: 1s so far, deadline 1m0s; its log: LOG:  redo starts",
		"waiting for the server to start: 6s so far, deadline 1m0s; its log: LOG:  redo starts",
		"waiting for the server to start: 11s so far, deadline 1m0s; its log: LOG:  redo starts",
	}
	if strings.Join(n.lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines %q at %v, want %q", n.lines, n.at, want)
	}
}
