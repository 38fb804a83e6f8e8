package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// received reports the value waiting on c, if any, without blocking.
func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-c:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeNowMovesOnlyWhenTold(t *testing.T) {
	f := NewFake(t0)
	if !f.Now().Equal(t0) {
		t.Fatalf("now %s, want %s", f.Now(), t0)
	}
	f.Advance(1500 * time.Millisecond)
	if got := Since(f, t0); got != 1500*time.Millisecond {
		t.Fatalf("since start %s, want 1.5s", got)
	}
	f.Set(t0.Add(time.Hour))
	if got := Until(f, t0.Add(2*time.Hour)); got != time.Hour {
		t.Fatalf("until %s, want 1h", got)
	}
}

func TestFakeTimerFiresAtItsDueTime(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(100 * time.Millisecond)
	if f.Pending() != 1 {
		t.Fatalf("pending %d, want 1", f.Pending())
	}
	f.Advance(99 * time.Millisecond)
	if _, ok := received(tm.C); ok {
		t.Fatal("fired 1ms early")
	}
	f.Advance(time.Millisecond)
	if v, ok := received(tm.C); !ok || !v.Equal(t0.Add(100*time.Millisecond)) {
		t.Fatalf("fired %v with %s, want at +100ms", ok, v.Sub(t0))
	}
	if f.Pending() != 0 {
		t.Fatalf("pending %d after firing", f.Pending())
	}
	// Fired once only.
	f.Advance(time.Hour)
	if _, ok := received(tm.C); ok {
		t.Fatal("fired twice")
	}
}

func TestFakeFiresInDueOrderWithTheirTimes(t *testing.T) {
	f := NewFake(t0)
	late, early := f.NewTimer(300*time.Millisecond), f.NewTimer(100*time.Millisecond)
	if at, ok := f.Next(); !ok || !at.Equal(t0.Add(100*time.Millisecond)) {
		t.Fatalf("next %s %v, want +100ms", at.Sub(t0), ok)
	}
	// One jump past both: each sees the clock at its own due time.
	f.Advance(time.Second)
	e, _ := received(early.C)
	l, _ := received(late.C)
	if e.Sub(t0) != 100*time.Millisecond || l.Sub(t0) != 300*time.Millisecond {
		t.Fatalf("fired at %s and %s, want 100ms and 300ms", e.Sub(t0), l.Sub(t0))
	}
	if got := f.Now().Sub(t0); got != time.Second {
		t.Fatalf("now +%s, want +1s", got)
	}
	if _, ok := f.Next(); ok {
		t.Fatal("a timer still pending")
	}
}

func TestFakeZeroAndNegativeFireAtOnce(t *testing.T) {
	f := NewFake(t0)
	for _, d := range []time.Duration{0, -time.Second} {
		if v, ok := received(f.NewTimer(d).C); !ok || !v.Equal(t0) {
			t.Errorf("NewTimer(%s): fired %v at %s, want at once", d, ok, v)
		}
	}
	if f.Pending() != 0 {
		t.Fatalf("pending %d", f.Pending())
	}
}

func TestFakeStopAndReset(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of an armed timer returned false")
	}
	if tm.Stop() {
		t.Fatal("second Stop returned true")
	}
	f.Advance(time.Hour)
	if _, ok := received(tm.C); ok {
		t.Fatal("a stopped timer fired")
	}

	// Fired but not received: Stop drops the value (no stale time).
	tm = f.NewTimer(time.Second)
	f.Advance(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of a fired, unreceived timer returned false")
	}
	if _, ok := received(tm.C); ok {
		t.Fatal("stale value received after Stop")
	}

	// Reset re-arms from the current time, dropping an unreceived value.
	f.Advance(time.Second)
	if tm.Reset(500 * time.Millisecond) {
		t.Fatal("Reset of a stopped timer returned true")
	}
	due := f.Now().Add(500 * time.Millisecond)
	f.Advance(500 * time.Millisecond)
	if !tm.Reset(200 * time.Millisecond) {
		t.Fatal("Reset of a fired, unreceived timer returned false")
	}
	if _, ok := received(tm.C); ok {
		t.Fatalf("stale value (due %s) received after Reset", due)
	}
	f.Advance(200 * time.Millisecond)
	if v, ok := received(tm.C); !ok || !v.Equal(f.Now()) {
		t.Fatalf("reset timer fired %v at %s", ok, v)
	}
}

func TestFakeBlockUntil(t *testing.T) {
	f := NewFake(t0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A goroutine that waits on the clock twice, as code under test does.
	woke := make(chan time.Time)
	go func() {
		for range 2 {
			tm := f.NewTimer(50 * time.Millisecond)
			woke <- <-tm.C
		}
	}()
	for i := 1; i <= 2; i++ {
		if err := f.BlockUntil(ctx, 1); err != nil {
			t.Fatal(err)
		}
		f.Advance(50 * time.Millisecond)
		if got := (<-woke).Sub(t0); got != time.Duration(i)*50*time.Millisecond {
			t.Fatalf("wake %d at +%s", i, got)
		}
	}
	// Nobody arms a timer: BlockUntil ends with its context.
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	if err := f.BlockUntil(short, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("BlockUntil with no timer: %v, want the context's deadline", err)
	}
}

func TestRealClock(t *testing.T) {
	c := Real()
	start := c.Now()
	tm := c.NewTimer(time.Millisecond)
	select {
	case <-tm.C:
	case <-time.After(10 * time.Second):
		t.Fatal("real timer did not fire")
	}
	if Since(c, start) < time.Millisecond {
		t.Fatal("real timer fired early")
	}
	tm = c.NewTimer(time.Hour)
	if !tm.Stop() || tm.Reset(time.Hour) {
		t.Fatal("Stop/Reset of a real timer")
	}
	tm.Stop()
}
