package session

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/netio"
)

// stepsResult is how the steps of a run went.
type stepsResult struct {
	acc         *metrics.Accumulator // every measured interval of every step
	stopped     bool
	autostopped bool
}

// steps is what runSteps carries from one step to the next.
type steps struct {
	stepsResult
	fan         *fanout
	sampled     driver.Sampled
	beforeStart func()
	sweep       bool
	seq         int // the next interval's sequence number
	// targetSum is the arrivals the schedules asked for over targetSecs of
	// measured time.
	targetSum, targetSecs float64
	connectSum            time.Duration
	abandoned             int
}

// runSteps runs the load model, one driver run per step (one step unless
// sweeping), publishing every interval, and fills the summary. beforeStart
// runs just before the first step measures (driver.Config.BeforeStart).
func (r *run) runSteps(ctx context.Context, fan *fanout, sampled driver.Sampled, markStep func(time.Time), beforeStart func()) (stepsResult, error) {
	ss := &steps{stepsResult: stepsResult{acc: &metrics.Accumulator{}}, fan: fan, sampled: sampled, beforeStart: beforeStart,
		sweep: len(r.spec.Steps) > 1}
	for i, st := range r.spec.Steps {
		if ss.sweep {
			fan.publish(Record{Step: &StepStart{N: i + 1, Of: len(r.spec.Steps), Step: st}})
			if markStep != nil {
				markStep(time.Now()) // findings are judged per step
			}
		}
		if err := r.runStep(ctx, ss, i, st); err != nil {
			return ss.stepsResult, err
		}
		if ss.stopped {
			break
		}
	}
	r.fillSummary(ss)
	r.judge(ss.stepsResult)
	return ss.stepsResult, nil
}

// runStep runs step i, st, and adds it to the summary.
func (r *run) runStep(ctx context.Context, ss *steps, i int, st Step) error {
	spec := &r.spec
	stepNo := 0
	if ss.sweep {
		stepNo = i + 1
	}
	hold := r.hold(st)
	groups, rec := r.groups(st, hold)
	// A step's own statistics are for sweeps and replication checks; a
	// single step's are the run's (and its histograms cost 2 per type).
	var stepAcc metrics.Accumulator
	dcfg := r.driverConfig(ss, i, st, &stepAcc)
	if spec.AdaptProcs && hold == nil {
		r.procs.Adapt()
	}
	dr, err := driver.RunGroups(ctx, groups, dcfg, rec)
	r.procs.Fix()
	if err != nil {
		return err
	}
	if r.markSteady != nil {
		r.markSteady(steadyWindows(spec, st, stepNo, dr.Start, dr.End)...)
	}
	if !st.Schedule.Empty() {
		// The target is the asked-for arrivals over the time the
		// schedule ran (measured part only), not over the drain after.
		active := min(dr.End.Sub(dr.Start), st.Schedule.Duration()) - spec.Warmup
		ss.targetSecs += max(active, 0).Seconds()
	}
	ss.seq += int(dr.End.Sub(dr.Start)/spec.Tick) + 2
	if i == 0 {
		r.sum.Start = dr.Start
	}
	r.sum.End = dr.End
	ss.connectSum += dr.InitialConnect
	r.sum.Reconnects += dr.Reconnects
	ss.abandoned += dr.Abandoned
	r.sum.Unstarted += dr.Unstarted
	r.sum.NotConnected = max(r.sum.NotConnected, dr.NotConnected)
	var repl *metrics.Replication
	if r.repl != nil && !dr.Stopped {
		ps := stepAcc.Step(i+1, st.Clients, st.Rate)
		repl = r.repl.step(ctx, dr.Start, dr.End, ps.Transactions, ps.DurationS, ps.TPS)
	}
	if ss.sweep {
		r.sum.Steps = append(r.sum.Steps, r.stepSummary(&stepAcc, i, st, dr, repl))
	}
	if dr.Stopped {
		ss.stopped, ss.autostopped = true, dr.Autostopped
		r.sum.StopReason = dr.StopReason
		if ss.sweep {
			r.sum.StopReason = fmt.Sprintf("step %d: %s", i+1, dr.StopReason)
		}
	}
	return nil
}

// driverConfig is the driver's configuration of step i, st; its intervals
// go to the run's and the step's accumulators and to the outputs.
func (r *run) driverConfig(ss *steps, i int, st Step, stepAcc *metrics.Accumulator) driver.Config {
	spec := &r.spec
	stepNo := 0
	if ss.sweep {
		stepNo = i + 1
	}
	seq := ss.seq
	stepStats := ss.sweep || r.repl != nil
	dcfg := driver.Config{
		Duration:     spec.Duration,
		Transactions: spec.Transactions,
		Tick:         spec.Tick,
		Drain:        spec.Drain,
		Seed:         spec.Seed + uint64(i),
		Notef:        r.notef,
		Ramp:         spec.Ramp,
		Warmup:       spec.Warmup,
		Autostop:     spec.Autostop,
		Sampled:      ss.sampled,
		Observer:     r.observer,
		Segment:      spec.Segment,

		StatementLatencies: spec.StatementLatencies,

		ProceedWithConnected: spec.ProceedWithConnected,
		// The clock goroutine only adds up and hands over: disk,
		// terminal and database work happen in the outputs.
		OnInterval: func(iv metrics.Interval) {
			if iv.Seq == 1 && r.alignSamples != nil {
				r.alignSamples(iv.Start) // the step's start: samples come with its ticks
			}
			iv.Seq += seq
			iv.Step = stepNo
			ss.acc.Add(iv)
			if stepStats {
				stepAcc.Add(iv)
			}
			if !iv.Warmup {
				// Arrivals the schedule asked for in this interval.
				ss.targetSum += iv.TargetRate * iv.Duration().Seconds()
			}
			ss.fan.publish(Record{Interval: &iv})
		},
	}
	length := spec.Duration // measured, after the warm-up
	if !st.Schedule.Empty() {
		dcfg.Duration = 0
		length = max(st.Schedule.Duration()-spec.Warmup, 0)
	}
	dcfg.OnStart, dcfg.OnEnd = r.fo.hooks(length)
	if i == 0 {
		dcfg.StartAt, dcfg.BeforeStart = spec.StartAt, ss.beforeStart
	}
	return dcfg
}

// stepSummary is a sweep's summary of step i, st.
func (r *run) stepSummary(stepAcc *metrics.Accumulator, i int, st Step, dr driver.Result, repl *metrics.Replication) metrics.StepSummary {
	ss := stepAcc.Step(i+1, st.Clients, st.Rate)
	ss.Replication = repl
	if dr.Abandoned > 0 {
		// As fillSummary does for the run.
		if ss.Drain == nil {
			ss.Drain = &metrics.DrainSummary{DrainS: round3(stepAcc.Drain.Seconds())}
		}
		ss.Unfinished += int64(dr.Abandoned)
		ss.Drain.Cancelled += int64(dr.Abandoned)
		ss.Drain.Abandoned = dr.Abandoned
	}
	if ss.FailedShare() > r.spec.MaxErrorRate {
		ss.Status = metrics.StatusDegraded
	}
	if p := repl.Problem(); p != "" {
		ss.Status, ss.StopReason = metrics.StatusDegraded, p
	}
	if dr.Stopped {
		ss.Status, ss.StopReason = metrics.StatusStopped, dr.StopReason
		if dr.Autostopped {
			ss.Status = metrics.StatusAutostopped
		}
	}
	return ss
}

// fillSummary puts the steps' measurements into the run's summary.
func (r *run) fillSummary(ss *steps) {
	spec := &r.spec
	ss.acc.Fill(&r.sum)
	if ss.abandoned > 0 {
		// Each abandoned client's transaction was unfinished, then
		// cancelled; its goroutine never counted it.
		if r.sum.Drain == nil {
			r.sum.Drain = &metrics.DrainSummary{DrainS: round3(ss.acc.Drain.Seconds())}
		}
		r.sum.Unfinished += int64(ss.abandoned)
		r.sum.Drain.Cancelled += int64(ss.abandoned)
		r.sum.Drain.Abandoned = ss.abandoned
	}
	nameStatements(&r.sum, spec.Groups)
	r.sum.InitialConnectMS = float64((ss.connectSum / time.Duration(len(spec.Steps))).Microseconds()) / 1000
	if ss.targetSecs > 0 && ss.targetSum > 0 {
		r.sum.TargetRate = ss.targetSum / ss.targetSecs
	}
	if len(spec.Groups) > 1 {
		for _, g := range spec.Groups {
			gs := ss.acc.Group(g.Name)
			gs.Workload, gs.Clients, gs.QueryMode = g.Workload.Meta().Name, g.Clients, g.QueryMode
			r.sum.Groups = append(r.sum.Groups, gs)
		}
	}
}

// judge sets the run's status from how its steps went.
func (r *run) judge(res stepsResult) {
	r.sum.Status = metrics.StatusComplete
	switch {
	case res.autostopped:
		r.sum.Status = metrics.StatusAutostopped
	case res.stopped:
		r.sum.Status = metrics.StatusStopped
	case r.sum.FailedShare() > r.spec.MaxErrorRate:
		// The numbers do not mean what they say: too much failed.
		r.sum.Status = metrics.StatusDegraded
		what := "failed"
		if d := r.sum.Drain; d != nil && d.Cancelled > 0 {
			what = "failed or were cancelled at the end"
		}
		r.sum.StopReason = fmt.Sprintf("%.1f%% of transactions %s, more than the %g%% allowed (--max-error-rate)",
			100*r.sum.FailedShare(), what, 100*r.spec.MaxErrorRate)
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// hold is the netio.Hold of step st's clients: one when they are no more
// than the run's threads (GOMAXPROCS, which then stays as it is) and use raw I/O, so
// each waits for its answers on a thread and a P of its own; nil
// otherwise.
func (r *run) hold(st Step) *netio.Hold {
	if r.spec.NetIO != netio.Raw {
		return nil
	}
	clients := st.Clients
	for i := 1; i < len(r.spec.Groups); i++ {
		clients += r.spec.Groups[i].Clients
	}
	if procs := r.procs.Threads(); clients <= procs {
		return netio.NewHold(procs)
	}
	return nil
}

// groups are the driver's client groups of step st (which sets the first
// group's clients and schedule) and their Recorder.
func (r *run) groups(st Step, hold *netio.Hold) ([]driver.Group, *metrics.Recorder) {
	var rec *metrics.Recorder
	if len(r.spec.Groups) == 1 {
		rec = metrics.NewRecorder(r.spec.Groups[0].Workload.TxTypes(), time.Now())
	} else {
		rec = metrics.NewRecorder(nil, time.Now())
	}
	// The intervals' readers after the clock's next tick are the outputs,
	// which retain them (fanout.publish).
	rec.ReuseHistograms()
	out := make([]driver.Group, len(r.spec.Groups))
	for i := range r.spec.Groups {
		g := &r.spec.Groups[i]
		dg := driver.Group{Name: g.Name, Workload: g.Workload, Dial: r.dialer(g, hold), Clients: g.Clients,
			ConnectPerTx: g.ConnectPerTx, MaxTries: g.MaxTries, Schedule: g.Schedule, Arrival: g.Arrival,
			LatencyLimit: g.LatencyLimit, After: g.After}
		if g.Workload.Meta().PgConnOnly {
			dg.DialPgConn, dg.Protocol = r.pgConnDialer(g, hold)
			dg.Held = hold != nil
		}
		if i == 0 {
			dg.Clients, dg.Schedule = st.Clients, st.Schedule
		}
		if len(r.spec.Groups) > 1 {
			dg.TxBase = rec.AddGroup(g.Name, g.Workload.TxTypes())
		}
		out[i] = dg
	}
	return out, rec
}
