package driver

import (
	"sync"
	"time"
)

// DefaultReconnectRate bounds the connection attempts per second that all
// clients of a run together make after a failed attempt (see
// reconnectLimiter).
const DefaultReconnectRate = 50

// reconnectLimiter spaces the connection attempts that follow a failure
// across all clients: each takes the next free slot, 1/rate apart, so a run
// whose server refuses (too many clients, restarting) never makes more than
// rate attempts a second however many clients it has, on top of each
// client's own exponential backoff. Unused slots do not pile up beyond one
// second's worth.
type reconnectLimiter struct {
	every time.Duration
	mu    sync.Mutex
	next  time.Time
}

func newReconnectLimiter(rate float64) *reconnectLimiter {
	if rate <= 0 {
		rate = DefaultReconnectRate
	}
	return &reconnectLimiter{every: time.Duration(float64(time.Second) / rate)}
}

// reserve returns when the caller may make its attempt.
func (l *reconnectLimiter) reserve(now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A burst of at most one second's attempts after a quiet spell.
	if floor := now.Add(-time.Second); l.next.Before(floor) {
		l.next = floor
	}
	slot := l.next
	l.next = slot.Add(l.every)
	if slot.Before(now) {
		return now
	}
	return slot
}
