package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Fake is a Clock for tests: its time moves only on Advance and Set. Safe
// for use from any goroutine.
//
// A timer armed on a Fake is pending until the clock reaches its due time,
// when it fires (sends the clock's time then on its channel, which holds one
// value so that firing never waits for the receiver), or until it is
// stopped. A test that steps a run waits with BlockUntil until the code
// under test has armed the timers it should be waiting on, then moves the
// clock: nothing then depends on how fast the machine is.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	pending []*fakeTimer  // armed and not yet fired or stopped
	changed chan struct{} // closed (and replaced) when pending changes
}

// NewFake returns a Fake clock reading start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now is the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer arms a timer due d from the fake time (fired at once if d <= 0).
func (f *Fake) NewTimer(d time.Duration) *Timer {
	ft := &fakeTimer{f: f, ch: make(chan time.Time, 1)}
	f.mu.Lock()
	ft.armLocked(d)
	f.mu.Unlock()
	return &Timer{C: ft.ch, fake: ft}
}

// Advance moves the clock forward by d, firing the timers that fall due in
// the order of their due times.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	to := f.now.Add(d)
	f.mu.Unlock()
	f.Set(to)
}

// Set moves the clock to t, firing the timers due at or before t in the
// order of their due times (each sees the clock at its due time). Moving
// the clock back fires nothing.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.pending) > 0 && !f.pending[0].at.After(t) {
		ft := f.pending[0]
		if ft.at.After(f.now) {
			f.now = ft.at
		}
		f.removeLocked(ft)
		ft.fireLocked(f.now)
	}
	f.now = t
}

// Pending is the number of timers armed and not yet fired or stopped.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// Next is the due time of the earliest pending timer (false: none).
func (f *Fake) Next() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending) == 0 {
		return time.Time{}, false
	}
	return f.pending[0].at, true
}

// BlockUntil waits until at least n timers are pending, or ctx ends (its
// error is returned then). It waits on real time: give ctx a deadline.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		enough, changed := len(f.pending) >= n, f.changed
		f.mu.Unlock()
		if enough {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// signalLocked wakes the BlockUntil callers after a change of pending.
func (f *Fake) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Fake) removeLocked(ft *fakeTimer) bool {
	for i, p := range f.pending {
		if p == ft {
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
			f.signalLocked()
			return true
		}
	}
	return false
}

type fakeTimer struct {
	f  *Fake
	ch chan time.Time // capacity 1
	at time.Time      // guarded by f.mu
}

// armLocked makes ft due d from now, firing it at once if d <= 0.
func (ft *fakeTimer) armLocked(d time.Duration) {
	f := ft.f
	if d <= 0 {
		ft.fireLocked(f.now)
		return
	}
	ft.at = f.now.Add(d)
	// Stable insertion keeps timers due at the same time in arming order.
	i := sort.Search(len(f.pending), func(i int) bool { return f.pending[i].at.After(ft.at) })
	f.pending = append(f.pending, nil)
	copy(f.pending[i+1:], f.pending[i:])
	f.pending[i] = ft
	f.signalLocked()
}

// fireLocked delivers now; the channel is empty (stop and reset drain it).
func (ft *fakeTimer) fireLocked(now time.Time) {
	select {
	case ft.ch <- now:
	default:
	}
}

// stopLocked disarms ft and drops a fired value not yet received, and
// reports whether ft was active (armed, or fired and not received).
func (ft *fakeTimer) stopLocked() bool {
	active := ft.f.removeLocked(ft)
	select {
	case <-ft.ch:
		active = true
	default:
	}
	return active
}

func (ft *fakeTimer) stop() bool {
	ft.f.mu.Lock()
	defer ft.f.mu.Unlock()
	return ft.stopLocked()
}

func (ft *fakeTimer) reset(d time.Duration) bool {
	ft.f.mu.Lock()
	defer ft.f.mu.Unlock()
	active := ft.stopLocked()
	ft.armLocked(d)
	return active
}
