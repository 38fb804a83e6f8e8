// Package await is how pgarena waits for something outside it: a
// replica's initial copy or catch-up, a server or a pooler starting, a
// common start time. Every wait has a deadline that a flag sets, reports
// its progress at least every Every (what it waits for, how long so far,
// the deadline, and what it sees: the server's own error when there is
// one), and ends with an error that says all of that. Only cli prints:
// reports go to a Notef callback, which is cli's.
package await

import (
	"context"
	"fmt"
	"time"

	"github.com/pgarena/pgarena/internal/clock"
)

const (
	// First is when a wait that has not ended reports for the first time,
	// so that waits ending in a blink print nothing.
	First = time.Second
	// Every is the longest a wait goes without a report after that.
	Every = 5 * time.Second
)

// Wait describes one wait.
type Wait struct {
	// What is awaited, as a noun phrase ("the pglogical replica's
	// initial copy").
	What string
	// Timeout is the deadline, counted from Start.
	Timeout time.Duration
	// Flag names the flag that sets Timeout ("--replica-sync-timeout"),
	// for the messages; "" when none does.
	Flag string
	// Notef receives the progress lines (nil: none).
	Notef func(format string, args ...any)
	// Clock is where the wait reads the time (nil: the system clock).
	Clock clock.Clock
}

// Progress is a wait under way.
type Progress struct {
	w           Wait
	start, next time.Time
}

// Start starts the wait's clock.
func (w Wait) Start() *Progress {
	if w.Clock == nil {
		w.Clock = clock.Real()
	}
	now := w.Clock.Now()
	return &Progress{w: w, start: now, next: now.Add(First)}
}

// Elapsed is how long the wait has lasted.
func (p *Progress) Elapsed() time.Duration { return clock.Since(p.w.Clock, p.start) }

// Left is the time until the deadline (negative once it passed).
func (p *Progress) Left() time.Duration { return p.w.Timeout - p.Elapsed() }

// Expired reports whether the deadline has passed.
func (p *Progress) Expired() bool { return p.Left() < 0 }

// Report sends a progress line when one is due (First after the start,
// then every Every); status is what the wait sees now ("" when nothing
// more than that it goes on).
func (p *Progress) Report(status string) {
	now := p.w.Clock.Now()
	if p.w.Notef == nil || now.Before(p.next) {
		return
	}
	p.next = now.Add(Every)
	p.w.Notef("%s", p.line(status))
}

// NextReport is the time until the next report is due (at most Every).
func (p *Progress) NextReport() time.Duration {
	return max(p.next.Sub(p.w.Clock.Now()), 0)
}

func (p *Progress) line(status string) string {
	s := fmt.Sprintf("waiting for %s: %s so far, deadline %s%s", p.w.What, round(p.Elapsed()), round(p.w.Timeout), p.flag())
	if status != "" {
		s += "; " + status
	}
	return s
}

func (p *Progress) flag() string {
	if p.w.Flag == "" {
		return ""
	}
	return " (" + p.w.Flag + ")"
}

// Err is the error of a wait whose deadline passed, with what it saw
// last.
func (p *Progress) Err(status string) error {
	s := fmt.Sprintf("%s did not happen within %s%s", p.w.What, round(p.w.Timeout), p.flag())
	if status != "" {
		s += ": " + status
	}
	return &DeadlineError{msg: s}
}

// DeadlineError is the error of a wait whose deadline passed.
type DeadlineError struct{ msg string }

func (e *DeadlineError) Error() string { return e.msg }

// Poll calls check every poll until it reports done or fails, the
// deadline passes (a *DeadlineError with check's last status) or ctx
// ends, reporting progress with check's status as it goes. check's status
// is what it sees, in the server's own words when the server reports an
// error; a check error ends the wait with that error.
func (w Wait) Poll(ctx context.Context, poll time.Duration, check func(ctx context.Context) (done bool, status string, err error)) error {
	p := w.Start()
	for {
		done, status, err := check(ctx)
		if err != nil || done {
			return err
		}
		if p.Expired() {
			return p.Err(status)
		}
		p.Report(status)
		t := p.w.Clock.NewTimer(min(poll, max(p.Left(), 0)+time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for %s: %w", w.What, ctx.Err())
		case <-t.C:
		}
	}
}

// During reports the progress of a wait that run does itself (a program
// that waits, such as pg_ctl start -w, bounded by w.Timeout through its
// own deadline), with status's report, until run returns its error.
func (w Wait) During(status func() string, run func() error) error {
	p := w.Start()
	done := make(chan error, 1)
	go func() { done <- run() }()
	for {
		t := p.w.Clock.NewTimer(max(p.NextReport(), time.Millisecond))
		select {
		case err := <-done:
			t.Stop()
			return err
		case <-t.C:
			p.Report(status())
		}
	}
}

// round shortens a duration for a progress line.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
