package clock

import (
	"runtime"
	"testing"
	"time"
)

func TestAlarmWaitsAndCloseEndsItsWait(t *testing.T) {
	if NewAlarm(NewFake(t0)) != nil {
		t.Fatal("an Alarm on a Fake clock")
	}
	a := NewAlarm(Real())
	if a == nil {
		if runtime.GOOS == "linux" {
			t.Fatal("no Alarm on Linux")
		}
		t.Skip("no Alarm on " + runtime.GOOS)
	}
	for _, d := range []time.Duration{20 * time.Millisecond, 0} {
		start := time.Now()
		if err := a.Wait(d); err != nil {
			t.Fatalf("Wait(%s): %v", d, err)
		}
		if got := time.Since(start); got < d {
			t.Fatalf("Wait(%s) returned after %s", d, got)
		}
	}
	// Expiries that come before the Wait parks (it arms the timer in the
	// poller's read) end it all the same.
	for i := range 300 {
		if err := a.Wait(time.Duration(i%3) * time.Microsecond); err != nil {
			t.Fatalf("short Wait %d: %v", i, err)
		}
	}
	// A Ring before a Wait does not end it: arming clears its expiry.
	a.Ring()
	if start := time.Now(); a.Wait(20*time.Millisecond) != nil || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("Wait after a Ring returned after %s", time.Since(start))
	}
	// Ring ends a Wait in progress with nil.
	rung := make(chan error, 1)
	go func() { rung <- a.Wait(time.Hour) }()
	for end := time.Now().Add(10 * time.Second); len(rung) == 0 && time.Now().Before(end); {
		a.Ring() // until the Wait has begun and reads it
		runtime.Gosched()
	}
	select {
	case err := <-rung:
		if err != nil {
			t.Fatalf("Wait ended by Ring: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ring did not end the Wait within 10 s")
	}
	// A Wait that would last an hour ends when Close is called (during
	// it or before it starts: either way).
	done := make(chan error, 1)
	go func() { done <- a.Wait(time.Hour) }()
	a.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Wait ended by Close returned nil")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the Wait within 10 s")
	}
	if a.Wait(time.Millisecond) == nil {
		t.Fatal("Wait after Close returned nil")
	}
}
