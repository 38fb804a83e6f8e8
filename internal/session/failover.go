package session

import (
	"context"
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
	After    time.Duration // into the run
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
		return inputf("--failover %s must come within the run (-T %s)", f.After, total)
	case len(s.Groups) > 1 || s.Groups[0].Replica != "":
		return inputf("--failover runs one client group on the primary")
	}
	return nil
}

// failover is a run's failover: the replica's, and the intervals it
// counts the failures of the downtime in.
type failover struct {
	fo        *replica.Failover
	mu        sync.Mutex
	intervals []metrics.Interval
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

// start starts the ledger client and the fault's timer, and publishes
// when the fault is due.
func (f *failover) start(ctx context.Context, publish func([]store.Sample)) {
	if f != nil && f.fo != nil {
		f.fo.Start(ctx)
		publish([]store.Sample{{Time: time.Now(), Source: metrics.FailoverSource,
			Values: map[string]float64{metrics.FailoverArmed: f.fo.After.Seconds()}}})
	}
}

// result stops the failover and measures it, once the intervals are in.
func (f *failover) result(ctx context.Context, s *metrics.Summary) *metrics.Failover {
	if f == nil || f.fo == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fo.Stop(ctx, s.Start, f.intervals)
}

// outputs is the failover's output (none without a failover).
func (f *failover) outputs() []Output {
	if f == nil {
		return nil
	}
	return []Output{f}
}
