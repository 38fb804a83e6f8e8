package clock

import "time"

// An Alarm waits for durations on the real clock without a timer of Go's
// runtime: while one of the runtime's timers is pending, every wait of its
// network poller (epoll_pwait) carries a timeout, which the kernel arms and
// cancels as a high-resolution timer on each call. A run's ticker is
// pending all the time, so a client parked on a slow answer would pay that
// on every round trip; an Alarm keeps it out (Linux: a timerfd(2) read
// through the network poller itself, alarm_linux.go). One goroutine waits
// on an Alarm at a time.
type Alarm interface {
	// Wait returns nil after d, or an error once Close was called.
	Wait(d time.Duration) error
	// Ring ends a Wait in progress now, as if its time had come (nil); a
	// Wait that starts after it is not ended. Any goroutine may call it.
	Ring()
	// Close ends a Wait in progress and every later one.
	Close() error
}

// NewAlarm returns an Alarm on c if c is the real clock and the platform
// has one; nil otherwise (then wait with c's timers).
func NewAlarm(c Clock) Alarm {
	if _, ok := c.(realClock); !ok {
		return nil
	}
	return newAlarm()
}
