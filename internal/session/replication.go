package session

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/sampled"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/replica"
)

// DefaultCatchUpTimeout bounds the wait for the replicas after each step.
const DefaultCatchUpTimeout = 30 * time.Minute

// replication watches the target's replicas (internal/target/replica)
// during the run: heartbeat lag on the timeline, and after each step the
// catch-up and the sustainable rate.
type replication struct {
	hb      *replica.Heartbeat
	mon     *replica.Monitor
	timeout time.Duration
	names   []string // the replicas' series names (replica.Names)
	notef   func(format string, args ...any)
	// catch-ups of the steps so far, per replica, for the run's summary.
	catchUp [][]time.Duration
	caught  []bool
	// readErr is, per replica, why it could not be read when it last
	// did not catch up ("" if it could).
	readErr []string
	// ended: stopped before the end of the run (a failover): no catch-up.
	ended atomic.Bool
	once  sync.Once
}

// replicatedTables are the tables the replicas follow: the workloads'
// and the heartbeat.
func (r *run) replicatedTables() []string {
	var tables []string
	for _, w := range r.workloads() {
		for _, t := range w.Tables() {
			tables = append(tables, t.Name)
		}
	}
	return append(tables, replica.HeartbeatTable)
}

// checkReplicas lets the replicas refuse the run's tables before anything
// is recorded (target.Replica.Check).
func (r *run) checkReplicas(ctx context.Context) error {
	for _, rep := range r.tgt.Replicas {
		if rep.Check != nil {
			if err := rep.Check(ctx, r.replicatedTables()); err != nil {
				return err
			}
		}
	}
	return nil
}

// startReplication creates the heartbeat on the target, attaches the
// replicas to the workloads' tables and the heartbeat (a logical
// subscriber copies them now: the initial copy is not measured), starts
// the heartbeat and waits until the replicas are in sync. It returns nil
// when the target has no replicas.
func (r *run) startReplication(ctx context.Context, publish func([]store.Sample)) (*replication, error) {
	reps := r.tgt.Replicas
	for _, g := range r.spec.Groups {
		if g.Replica != "" && !slices.ContainsFunc(reps, func(rep target.Replica) bool { return rep.Kind == g.Replica }) {
			return nil, fmt.Errorf("client group %s goes to a %s replica, and the target has none", g.Name, g.Replica)
		}
	}
	if len(reps) == 0 {
		return nil, nil
	}
	hb, err := r.attachReplicas(ctx, reps)
	if err != nil {
		return nil, err
	}
	rp := &replication{hb: hb, timeout: r.spec.CatchUpTimeout, names: replica.Names(reps), notef: r.notef, caught: make([]bool, len(reps)),
		readErr: make([]string, len(reps))}
	if rp.timeout <= 0 {
		rp.timeout = DefaultCatchUpTimeout
	}
	for i := range rp.caught {
		rp.caught[i] = true
	}
	rp.mon = replica.StartMonitor(ctx, hb, reps, replica.MonitorOptions{Every: r.spec.SampleEvery, Notef: r.notef,
		OnSample: func(at time.Time, lags map[string]float64) {
			vals := make(map[string]float64, len(lags))
			for name, v := range lags {
				vals[sampled.ReplicaLag(name)] = v
			}
			publish([]store.Sample{{Time: at, Source: "replication_heartbeat", Values: vals}})
		}})
	if err := rp.inSync(ctx, reps); err != nil {
		rp.stop()
		return nil, err
	}
	return rp, nil
}

// attachReplicas creates the heartbeat on the target and attaches the
// replicas to the workloads' tables and the heartbeat's.
func (r *run) attachReplicas(ctx context.Context, reps []target.Replica) (*replica.Heartbeat, error) {
	hb, err := replica.NewHeartbeat(ctx, r.tgt.Direct().Config)
	if err != nil {
		return nil, err
	}
	tables := r.replicatedTables()
	for _, rep := range reps {
		if rep.Attach == nil {
			continue
		}
		if err := rep.Attach(ctx, tables); err != nil {
			hb.Close()
			return nil, err
		}
	}
	return hb, nil
}

// inSync waits until the replicas are in sync before measuring.
func (rp *replication) inSync(ctx context.Context, reps []target.Replica) error {
	// In sync before measuring. A replica that shows no new beat within
	// replica.ShowWait, and does not replicate at all by its own account
	// (a standby replaying no WAL; a server without the table that is not
	// a standby; one whose subscriptions receive nothing), does not
	// replicate the heartbeat (a --replica-dsn that is not a replica of
	// the primary, or leaves the table out): bad input. One that shows
	// beats or replicates, but lags (a standby replaying a large load),
	// gets up to 2 minutes more.
	before := make([]replica.Progress, len(reps))
	for i, rep := range reps {
		before[i], _ = replica.ReadProgress(ctx, rep.Config)
	}
	wait := min(rp.timeout, replica.ShowWait)
	_, ok, err := rp.mon.CatchUp(ctx, wait, "--catch-up-timeout")
	for i, done := range ok {
		if done || err != nil || rp.mon.Advanced(i) {
			continue
		}
		now, perr := replica.ReadProgress(ctx, reps[i].Config)
		if perr == nil && (now.Standby || now.HasTable) && now.Mark != "" && now.Mark != before[i].Mark {
			continue
		}
		why := "it must be a replica of the primary and replicate that table like the workload's tables (add it to the publication or replication set)"
		if reps[i].Trouble != nil {
			if terr := reps[i].Trouble(ctx); terr != nil {
				why = terr.Error()
			}
		}
		err = inputf("replica %s shows no new beat of pgarena's heartbeat table %s within %s, and replicates nothing: %s",
			reps[i].Description, replica.HeartbeatTable, wait, why)
	}
	if err == nil && slices.Contains(ok, false) {
		long := min(rp.timeout, 2*time.Minute)
		_, ok, err = rp.mon.CatchUp(ctx, long, "--catch-up-timeout, at most 2m0s here")
		for i, done := range ok {
			if !done && err == nil {
				why := ""
				if reps[i].Trouble != nil {
					if terr := reps[i].Trouble(ctx); terr != nil {
						why = ": " + terr.Error()
					}
				}
				err = fmt.Errorf("replica %s did not catch up with the primary within %s before the run%s", reps[i].Description, long, why)
			}
		}
	}
	return err
}

// step waits for the replicas to catch up after a step whose load ran
// from start to end, and returns how they kept up with transactions
// committed over durationS at tps.
func (rp *replication) step(ctx context.Context, start, end time.Time, transactions int64, durationS, tps float64) *metrics.Replication {
	if rp.ended.Load() {
		return nil
	}
	took, ok, err := rp.mon.CatchUp(ctx, rp.timeout, "--catch-up-timeout")
	if err != nil {
		rp.notef("replication: no catch-up measured: %v", err)
		return nil
	}
	rp.catchUp = append(rp.catchUp, took)
	for i := range ok {
		rp.caught[i] = rp.caught[i] && ok[i]
		rp.readErr[i] = ""
		if ok[i] {
			continue
		}
		if err := rp.mon.ReadError(i); err != nil {
			rp.readErr[i] = pgerr.Describe(err)
			rp.notef("replica %s did not catch up: it could not be read after %s: %s", rp.names[i], took[i].Round(100*time.Millisecond), rp.readErr[i])
			continue
		}
		rp.notef("replica %s did not catch up within %s", rp.names[i], rp.timeout)
	}
	return rp.summary(start, end, took, ok, transactions, durationS, tps)
}

func (rp *replication) summary(start, end time.Time, took []time.Duration, ok []bool, transactions int64, durationS, tps float64) *metrics.Replication {
	out := &metrics.Replication{}
	for i, st := range rp.mon.Stats(start, end) {
		out.Replicas = append(out.Replicas, metrics.ReplicaLag{Name: st.Name, Kind: st.Kind,
			LagMaxS: st.Max, LagP99S: st.P99, LagEndS: st.AtEnd, CatchUpS: took[i].Seconds(), CaughtUp: ok[i],
			FailedReads: st.Failed, UnreadableS: st.Unreadable})
		if !ok[i] {
			out.Replicas[len(out.Replicas)-1].Error = rp.readErr[i]
		}
	}
	out.Finish(transactions, durationS, tps)
	return out
}

// run is the whole run's replication: lag over all steps, the catch-ups
// of all steps added up.
func (rp *replication) run(s *metrics.Summary) *metrics.Replication {
	if len(rp.catchUp) == 0 {
		return nil
	}
	total := make([]time.Duration, len(rp.caught))
	for _, took := range rp.catchUp {
		for i, d := range took {
			total[i] += d
		}
	}
	return rp.summary(s.Start, s.End, total, rp.caught, s.Transactions, s.DurationS, s.TPS)
}

// replicationFindings are the findings of a run's replication: a replica
// that could not be read at times, or did not catch up.
func replicationFindings(r *metrics.Replication) []store.Finding {
	if r == nil {
		return nil
	}
	var out []store.Finding
	for _, l := range r.Replicas {
		if l.FailedReads > 0 {
			out = append(out, store.Finding{Severity: store.SeverityWarning, Kind: "replica_unreadable",
				Message: fmt.Sprintf("replica %s could not be read %d times, %.1f s in all: its lag then counts from the newest beat it was seen to hold", l.Name, l.FailedReads, l.UnreadableS)})
		}
		if !l.CaughtUp {
			out = append(out, store.Finding{Severity: store.SeverityWarning, Kind: "replica_behind",
				Message: fmt.Sprintf("replica %s did not catch up within %.1f s: the sustainable rate is an upper bound", l.Name, l.CatchUpS)})
		}
	}
	return out
}

func (rp *replication) stop() {
	if rp == nil {
		return
	}
	rp.once.Do(func() {
		rp.mon.Stop()
		rp.hb.Close()
	})
}

// end stops watching the replicas before the end of the run: the primary
// is about to go (a failover), so there is no catch-up to measure.
func (rp *replication) end() {
	if rp == nil {
		return
	}
	rp.ended.Store(true)
	rp.notef("replication: the heartbeat stops before the failover; no catch-up is measured after it")
	rp.stop()
}
