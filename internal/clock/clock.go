// Package clock is the time source of a benchmark run: the time of day and
// timers, behind an interface so that tests can replace the wall clock with
// a Fake one that moves only when the test says so.
//
// The driver reads time and waits only through a Clock. Real() is the
// system clock (time.Now and time.NewTimer, monotonic readings included).
// A Fake starts at a given time and moves only on Advance or Set, firing
// the timers that fall due; BlockUntil lets a test wait until the code under
// test has armed the timers it is expected to wait on, so a test can step
// through a run event by event with no real sleep and no tolerance.
//
// Only waits on time go through the clock. Network I/O deadlines and
// connection timeouts stay on the wall clock: the kernel and the server do
// not know about a fake clock.
package clock

import "time"

// Clock reads the time and makes timers.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once, d
	// from now (at once if d <= 0).
	NewTimer(d time.Duration) *Timer
}

// Timer is a one-shot timer of a Clock. As with time.Timer (Go 1.23 and
// later), no stale time is received from C after Stop or Reset returns.
type Timer struct {
	C    <-chan time.Time
	real *time.Timer
	fake *fakeTimer
}

// Stop prevents the timer from firing. It reports whether it stopped the
// timer (false: the timer had already fired or been stopped).
func (t *Timer) Stop() bool {
	if t.real != nil {
		return t.real.Stop()
	}
	return t.fake.stop()
}

// Reset makes the timer fire d from now (at once if d <= 0), whether or not
// it had fired; it reports whether the timer was active.
func (t *Timer) Reset(d time.Duration) bool {
	if t.real != nil {
		return t.real.Reset(d)
	}
	return t.fake.reset(d)
}

// Since is the time elapsed on c since t.
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is the time on c until t.
func Until(c Clock, t time.Time) time.Duration { return t.Sub(c.Now()) }

// Real returns the system clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) *Timer {
	t := time.NewTimer(d)
	return &Timer{C: t.C, real: t}
}
