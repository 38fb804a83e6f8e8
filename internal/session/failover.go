package session

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/replica"
)

// Failover stops the primary during the run and promotes a standby
// (--failover); see replica.Failover.
type Failover struct {
	After    time.Duration // into the measured time (after connecting and the warm-up)
	Command  string        // --failover-command; default: an immediate shutdown
	External bool          // wait for the user's orchestrator to promote
	Timeout  time.Duration // promotion and first commit (replica.DefaultFailoverTimeout)
}

func (f *Failover) validate(s *Spec) error {
	total := s.Duration * time.Duration(max(len(s.Steps), 1))
	switch {
	case s.Duration <= 0:
		return inputf("--failover needs a run length in time (-T)")
	case f.After <= 0 || f.After >= total:
		what := "-T " + s.Duration.String()
		if len(s.Steps) > 1 {
			what = fmt.Sprintf("%d steps of -T %s", len(s.Steps), s.Duration)
		}
		return inputf("--failover %s must be more than 0 and less than the measured time (%s)", f.After, what)
	case len(s.Groups) > 1 || s.Groups[0].Replica != "":
		return inputf("--failover runs one client group on the primary")
	}
	return nil
}

// failover is a run's failover: the replica's, the intervals it counts
// the failures of the downtime in, and the measured time the fault's
// timer follows.
type failover struct {
	fo        *replica.Failover
	warmup    time.Duration
	publish   func([]store.Sample)
	mu        sync.Mutex
	intervals []metrics.Interval
	// measured is the measured time of the steps that ended; start the
	// current step's measured start (zero between steps).
	measured time.Duration
	start    time.Time
	armed    bool // published
}

// Write keeps the intervals (an Output).
func (f *failover) Write(rec Record) error {
	if rec.Interval != nil {
		f.mu.Lock()
		f.intervals = append(f.intervals, *rec.Interval)
		f.mu.Unlock()
	}
	return nil
}

// newFailover points the clients at the primary and then the standby (the
// target's streaming or --replica-dsn replica) and creates the ledger.
// Its events are published as samples (metrics.FailoverSource) as they
// happen.
func (r *run) newFailover(ctx context.Context, publish func([]store.Sample)) (*replica.Failover, error) {
	spec := r.spec.Failover
	if r.tgt.Server != nil {
		return nil, inputf("--failover: the clients follow the primary through a multi-host connection string, not through a pooler (--via)")
	}
	var standby *target.Replica
	for i, rep := range r.tgt.Replicas {
		if rep.Kind == "streaming" || rep.Kind == "dsn" {
			standby = &r.tgt.Replicas[i]
			break
		}
	}
	if standby == nil {
		return nil, inputf("--failover needs a standby to promote: --replica streaming, or --replica-dsn STANDBY")
	}
	clients := replica.FollowConfig(r.tgt.Config, standby.Config)
	fo := &replica.Failover{After: spec.After, Command: spec.Command, Crash: r.tgt.Crash, External: spec.External,
		Timeout: spec.Timeout, Primary: r.tgt.Config, Standby: standby.Config, Clients: clients, Notef: r.notef,
		BeforeFault: r.repl.end, OnEvent: func(event string, at time.Time) {
			publish([]store.Sample{{Time: at, Source: metrics.FailoverSource, Values: map[string]float64{event: 1}}})
		}}
	if err := fo.Prepare(ctx); err != nil {
		if fo.Crash == nil && fo.Command == "" {
			return nil, inputf("%v", err)
		}
		return nil, err
	}
	r.tgt.Config = clients
	return fo, nil
}

// begin starts the ledger client and the fault's timer, which the steps
// arm (stepStarted).
func (f *failover) begin(ctx context.Context, warmup time.Duration, publish func([]store.Sample)) {
	if f != nil && f.fo != nil {
		f.warmup, f.publish = warmup, publish
		f.fo.Start(ctx)
	}
}

// stepStarted arms the fault for a step whose driver started at start
// and measures for length (0: unknown) after its warm-up: the fault
// comes when the run has measured After, never outside measured time.
// The first step publishes when the fault is due.
func (f *failover) stepStarted(start time.Time, length time.Duration) {
	start = start.Add(f.warmup)
	var until time.Time
	if length > 0 {
		until = start.Add(length)
	}
	f.mu.Lock()
	f.start = start
	first := !f.armed
	f.armed = true
	origin := start.Add(-f.measured)
	f.mu.Unlock()
	f.fo.Arm(origin, until)
	if first {
		now := time.Now()
		f.publish([]store.Sample{{Time: now, Source: metrics.FailoverSource,
			Values: map[string]float64{metrics.FailoverArmed: origin.Add(f.fo.After).Sub(now).Seconds()}}})
	}
}

// stepEnded disarms the fault when a step's measured time ends at end
// (before its drain); once a step.
func (f *failover) stepEnded(end time.Time) {
	f.fo.Disarm()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.start.IsZero() {
		f.measured += max(end.Sub(f.start), 0)
		f.start = time.Time{}
	}
}

// hooks are the driver's OnStart and OnEnd for a step measuring for
// length after its warm-up; nil without a failover.
func (f *failover) hooks(length time.Duration) (onStart, onEnd func(time.Time)) {
	if f == nil || f.fo == nil {
		return nil, nil
	}
	return func(start time.Time) { f.stepStarted(start, length) }, f.stepEnded
}

// result stops the failover and measures it, once the intervals are in.
func (f *failover) result(ctx context.Context) *metrics.Failover {
	if f == nil || f.fo == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fo.Stop(ctx, f.intervals)
}

// outputs is the failover's output (none without a failover).
func (f *failover) outputs() []Output {
	if f == nil {
		return nil
	}
	return []Output{f}
}
