package metrics

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgarena/pgarena/internal/pgerr"
)

// Summary is the result of a run (or of one step of it), the form printed at
// the end, written to summary.json and emitted by --json.
type Summary struct {
	RunID      string `json:"run_id"`
	Status     string `json:"status"` // see the Status constants
	StopReason string `json:"stop_reason,omitempty"`
	Workload   string `json:"workload"`
	Label      string `json:"label,omitempty"`
	QueryMode  string `json:"query_mode"`
	Clients    int    `json:"clients"`
	Threads    int    `json:"threads"`
	// Params holds workload parameters (scale, script).
	Params map[string]string `json:"params,omitempty"`
	// Topology describes a distributed target in a few lines (Citus:
	// version, workers, distributed and reference tables, skew).
	Topology []string `json:"topology,omitempty"`
	// SessionSettings are the --session-set settings applied on every
	// workload connection: "group: key=value" or "key=value".
	SessionSettings []string `json:"session_settings,omitempty"`

	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	DurationS float64   `json:"duration_s"` // measured time, warm-up excluded
	WarmupS   float64   `json:"warmup_s,omitempty"`

	Transactions int64 `json:"transactions"` // committed
	Failed       int64 `json:"failed"`
	// Unfinished were still running when the measured time ended; Drain
	// says for how long and what became of them.
	Unfinished int64         `json:"unfinished,omitempty"`
	Drain      *DrainSummary `json:"drain,omitempty"`
	Errors     ErrorCounts   `json:"errors"`
	// ErrorAdvice says, per class that failed and has advice, what the
	// user can do about it (pgerr.ErrorClass.Advice), keyed by class name.
	ErrorAdvice map[string]string `json:"error_advice,omitempty"`
	Retries     int64             `json:"retries"`
	// Retried is the transactions retried at least once (pgbench's
	// "number of transactions retried"); Retries counts every retry.
	Retried int64        `json:"retried,omitempty"`
	Skipped int64        `json:"skipped,omitempty"` // open loop: not started, later than --latency-limit
	Late    int64        `json:"late,omitempty"`    // committed later than --latency-limit
	TPS     float64      `json:"tps"`               // committed per second of measured time
	Latency LatencyStats `json:"latency_ms"`
	Service LatencyStats `json:"service_ms"`
	// InitialConnectMS is the mean time to open a client's first
	// connection; it is not part of DurationS (pgbench's "tps without
	// initial connection time").
	InitialConnectMS float64 `json:"initial_connect_ms"`
	// Reconnects counts connections re-opened after a failure.
	Reconnects int64 `json:"reconnects,omitempty"`
	// MaxTries is --max-tries, pgbench's "maximum number of tries" (0 in
	// runs recorded before it was kept).
	MaxTries int `json:"max_tries,omitempty"`

	Tx []TxSummary `json:"tx"`

	// TargetRate is the open-loop rate asked for (mean over the measured
	// time); 0 in a closed loop.
	TargetRate float64 `json:"target_rate,omitempty"`
	// Unstarted counts open-loop arrivals that were due but never started.
	Unstarted int64 `json:"unstarted,omitempty"`
	// NotConnected counts clients whose first connection the server
	// refused and that sat the run out (run with the clients that
	// connected).
	NotConnected int `json:"not_connected,omitempty"`
	// Figures are the workload's figures of merit (TPC-C NOPM, TPM).
	Figures []Figure `json:"figures,omitempty"`
	// Steps holds one summary per step of a sweep (-c 1,2,4 or -R
	// 100,200); the top-level numbers then cover all steps together.
	Steps []StepSummary `json:"steps,omitempty"`
	// Groups holds one summary per client group when the run has several;
	// the top-level numbers then cover all groups together.
	Groups []GroupSummary `json:"groups,omitempty"`
	// Replication is how the replicas kept up (--replica, --replica-dsn).
	Replication *Replication `json:"replication,omitempty"`
	// Failover is what a failover during the run cost (--failover).
	Failover *Failover `json:"failover,omitempty"`
}

// GroupSummary is one client group's part of a run with several groups.
type GroupSummary struct {
	Name         string       `json:"name"`
	Workload     string       `json:"workload"`
	Clients      int          `json:"clients"`
	QueryMode    string       `json:"query_mode"`
	Transactions int64        `json:"transactions"`
	Failed       int64        `json:"failed"`
	Errors       ErrorCounts  `json:"errors"`
	TPS          float64      `json:"tps"`
	Latency      LatencyStats `json:"latency_ms"`
	Service      LatencyStats `json:"service_ms"`
	// Unfinished and Drain are the group's part of the run's.
	Unfinished int64         `json:"unfinished,omitempty"`
	Drain      *DrainSummary `json:"drain,omitempty"`
}

// Group summarises the transaction types of one client group (the
// metadata fields are left to the caller).
func (a *Accumulator) Group(name string) GroupSummary {
	sub := Accumulator{Measured: a.Measured, Warmup: a.Warmup, Drain: a.Drain, First: a.First, Last: a.Last}
	for _, t := range a.Tx {
		if t.Group == name {
			sub.Tx = append(sub.Tx, t)
		}
	}
	var s Summary
	sub.Fill(&s)
	return GroupSummary{Name: name, Transactions: s.Transactions, Failed: s.Failed, Errors: s.Errors,
		TPS: s.TPS, Latency: s.Latency, Service: s.Service, Unfinished: s.Unfinished, Drain: s.Drain}
}

// Figure is a workload's figure of merit.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	Note  string  `json:"note,omitempty"`
	Tx    string  `json:"tx,omitempty"` // the transaction type it belongs to; empty: the run
	// CrossCheck names the client-counted figure this database figure
	// should agree with (workload.Figure.CrossCheck).
	CrossCheck string `json:"cross_check,omitempty"`
}

// StepSummary is one step of a sweep. The fields after Status came later
// (summary.json files without them still load; Steps fills them from the
// intervals of a stored run).
type StepSummary struct {
	Step         int          `json:"step"`
	Clients      int          `json:"clients"`
	Rate         float64      `json:"rate,omitempty"` // open-loop target, tx/s
	DurationS    float64      `json:"duration_s"`
	Transactions int64        `json:"transactions"`
	Failed       int64        `json:"failed"`
	TPS          float64      `json:"tps"`
	Latency      LatencyStats `json:"latency_ms"`
	Status       string       `json:"status"`
	StopReason   string       `json:"stop_reason,omitempty"`

	Start   time.Time    `json:"start,omitzero"`
	End     time.Time    `json:"end,omitzero"`
	WarmupS float64      `json:"warmup_s,omitempty"`
	Errors  ErrorCounts  `json:"errors,omitzero"`
	Retries int64        `json:"retries,omitempty"`
	Service LatencyStats `json:"service_ms,omitzero"`
	// TargetRate is the mean scheduled rate over the step's measured
	// intervals (open loop); Rate is what the sweep asked for.
	TargetRate float64     `json:"target_rate,omitempty"`
	Tx         []TxSummary `json:"tx,omitempty"`
	// Replication is how the replicas kept up with this step.
	Replication *Replication `json:"replication,omitempty"`
	// Unfinished were still running when the step's measured time ended;
	// Drain says what became of them in the step's drain.
	Unfinished int64         `json:"unfinished,omitempty"`
	Drain      *DrainSummary `json:"drain,omitempty"`
}

// FailedShare is the step's Summary.FailedShare.
func (st *StepSummary) FailedShare() float64 {
	s := Summary{Transactions: st.Transactions, Failed: st.Failed, Unfinished: st.Unfinished, Drain: st.Drain}
	return s.FailedShare()
}

// Step summarises what a accumulated as one sweep step.
func (a *Accumulator) Step(step, clients int, rate float64) StepSummary {
	var s Summary
	a.Fill(&s)
	start := a.First
	if !start.IsZero() {
		start = start.Add(-a.Warmup)
	}
	return StepSummary{Step: step, Clients: clients, Rate: rate, DurationS: s.DurationS,
		Transactions: s.Transactions, Failed: s.Failed, TPS: s.TPS, Latency: s.Latency, Status: StatusComplete,
		Start: start, End: a.Last, WarmupS: s.WarmupS, Errors: s.Errors, Retries: s.Retries, Service: s.Service,
		TargetRate: a.TargetRate(), Tx: s.Tx, Unfinished: s.Unfinished, Drain: s.Drain}
}

// TargetRate is the mean scheduled rate over the measured intervals,
// weighted by their length; 0 in a closed loop.
func (a *Accumulator) TargetRate() float64 {
	if a.Measured <= 0 || a.targetSum == 0 {
		return 0
	}
	return round3(a.targetSum / a.Measured.Seconds())
}

// StepsOf summarises the intervals of a sweep, one StepSummary per step
// number (Interval.Step > 0) in order of first appearance; nil when no
// interval belongs to a step. Clients and Rate are left for the caller
// (they are not in the intervals) except that Clients is the highest
// connected count seen; Status is StatusComplete.
func StepsOf(ivs []Interval) []StepSummary {
	var order []int
	accs := map[int]*Accumulator{}
	conn := map[int]int{}
	start := map[int]time.Time{}
	for _, iv := range ivs {
		if iv.Step <= 0 {
			continue
		}
		a := accs[iv.Step]
		if a == nil {
			a = &Accumulator{}
			accs[iv.Step] = a
			order = append(order, iv.Step)
		}
		if _, ok := start[iv.Step]; !ok {
			start[iv.Step] = iv.Start // warm-up included
		}
		a.Add(iv)
		conn[iv.Step] = max(conn[iv.Step], iv.Connected)
	}
	out := make([]StepSummary, 0, len(order))
	for _, n := range order {
		st := accs[n].Step(n, conn[n], 0)
		st.Start = start[n]
		out = append(out, st)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Run statuses.
const (
	StatusComplete    = "complete"    // ran its full length
	StatusStopped     = "stopped"     // cut short: interrupted by the user, or ended before its clients' lists (-T)
	StatusFailed      = "failed"      // ended by an error
	StatusInterrupted = "interrupted" // pgarena died; only intervals remain
	StatusAutostopped = "autostopped" // an autostop rule ended it
	StatusDegraded    = "degraded"    // ran its length, but more transactions failed than allowed
	StatusRunning     = "running"
	StatusPartial     = "partial" // a merged run missing a segment, or with one cut short
)

// TxSummary is one transaction type's part of a Summary.
type TxSummary struct {
	Name         string `json:"name"`
	Group        string `json:"group,omitempty"`
	Transactions int64  `json:"transactions"`
	Failed       int64  `json:"failed"`
	Unfinished   int64  `json:"unfinished,omitempty"`
	// CommittedInDrain are those of Unfinished that committed in the
	// drain: not in Transactions, but in the database.
	CommittedInDrain int64       `json:"committed_in_drain,omitempty"`
	Errors           ErrorCounts `json:"errors"`
	// ErrorExamples: the first-ever and last-ever failure of each class
	// in the measured time, with SQLSTATE, message, detail and hint.
	ErrorExamples ErrorExamples `json:"error_examples,omitempty"`
	Retries       int64         `json:"retries"`
	TPS           float64       `json:"tps"`
	Latency       LatencyStats  `json:"latency_ms"`
	Service       LatencyStats  `json:"service_ms"`
	// Statements are the per-command latencies of the type's script
	// (-r), in script order.
	Statements []StatementSummary `json:"statements,omitempty"`
}

// StatementSummary is one command's per-statement figures, as pgbench -r
// reports them: the mean time of its completions, the transactions that
// failed at it and the retries after a failure at it.
type StatementSummary struct {
	Command  string  `json:"command,omitempty"` // named by the caller, which knows the workload
	Count    int64   `json:"count"`
	AvgMS    float64 `json:"avg_ms"`
	Failures int64   `json:"failures"`
	Retries  int64   `json:"retries"`
}

// statementSummaries turns per-command totals into means.
func statementSummaries(st []StmtStat) []StatementSummary {
	if len(st) == 0 {
		return nil
	}
	out := make([]StatementSummary, len(st))
	for i, s := range st {
		out[i].Count, out[i].Failures, out[i].Retries = s.Count, s.Failures, s.Retries
		if s.Count > 0 {
			out[i].AvgMS = round3(float64(s.SumNS) / float64(s.Count) / 1e6)
		}
	}
	return out
}

// Accumulator merges intervals into run totals, skipping warm-up intervals.
// The histograms it keeps are the "full histograms" of a run.
type Accumulator struct {
	Tx       []TxStats
	Measured time.Duration
	Warmup   time.Duration
	Drain    time.Duration // after the measured time (Interval.Drain)
	First    time.Time     // start of the first measured interval
	Last     time.Time     // end of the last interval

	targetSum float64 // Σ TargetRate × duration of measured intervals
	// spare are the bucket lists Add merges into next, per type: the
	// lists of Tx that the merge before replaced (nothing else reads
	// Tx's lists across an Add, which changes its histograms too).
	spare []bucketBufs
	// free are emptied histograms of the types before a Reset, for
	// the types after it.
	free []*hdr.Histogram
}

// Reset empties a for another series of Adds, keeping its histograms'
// memory: nothing may read what a accumulated afterwards.
func (a *Accumulator) Reset() {
	free := a.free
	for i := range a.Tx {
		for _, h := range []*hdr.Histogram{a.Tx[i].Latency, a.Tx[i].Service} {
			if h != nil {
				h.Reset()
				free = append(free, h)
			}
		}
	}
	*a = Accumulator{spare: a.spare, free: free}
}

// hist returns an empty histogram, one of a.free if any.
func (a *Accumulator) hist() *hdr.Histogram {
	if n := len(a.free); n > 0 {
		h := a.free[n-1]
		a.free = a.free[:n-1]
		return h
	}
	return NewHistogram()
}

// Add merges iv unless it is a warm-up interval.
func (a *Accumulator) Add(iv Interval) {
	if a.Last.Before(iv.End) {
		a.Last = iv.End
	}
	if iv.Warmup {
		a.Warmup += iv.Duration()
		return
	}
	if iv.Drain {
		// Its time is not measured; its counts are by their class: a
		// commit in it that ended before the measured time did is one of
		// the run's, one that ended after is Unfinished.
		a.Drain += iv.Duration()
	} else {
		if a.First.IsZero() {
			a.First = iv.Start
		}
		a.Measured += iv.Duration()
		a.targetSum += iv.TargetRate * iv.Duration().Seconds()
	}
	if a.Tx == nil {
		a.Tx = make([]TxStats, len(iv.Tx))
		for i, t := range iv.Tx {
			a.Tx[i] = TxStats{Name: t.Name, Group: t.Group, Latency: a.hist(), Service: a.hist(),
				latBuckets: []bucketCount{}, svcBuckets: []bucketCount{}}
		}
	}
	if len(a.spare) < len(a.Tx) {
		a.spare = make([]bucketBufs, len(a.Tx))
	}
	for i := range iv.Tx {
		if i < len(a.Tx) {
			a.Tx[i].addInto(&iv.Tx[i], &a.spare[i])
		}
	}
}

// Fill sets the measured fields of s (counts, rates, latencies, per-type
// rows) from what was accumulated. Metadata fields are left alone.
func (a *Accumulator) Fill(s *Summary) {
	secs := a.Measured.Seconds()
	rate := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return round3(float64(n) / secs)
	}
	var total TxStats
	if len(a.Tx) == 1 {
		// The one type is the total: read here, not changed, so shared
		// rather than merged into two new histograms.
		total = a.Tx[0]
	} else {
		total = MergeTx("total", a.Tx)
	}
	s.DurationS = round3(secs)
	s.WarmupS = round3(a.Warmup.Seconds())
	s.Transactions = total.Count
	s.Failed = total.Failed()
	s.Errors = total.Errors
	s.ErrorAdvice = nil
	for c := 1; c < pgerr.NumClasses; c++ {
		if a := pgerr.ErrorClass(c).Advice(); a != "" && total.Errors[c] > 0 {
			if s.ErrorAdvice == nil {
				s.ErrorAdvice = map[string]string{}
			}
			s.ErrorAdvice[pgerr.ErrorClass(c).String()] = a
		}
	}
	s.Unfinished = total.Unfinished.Count()
	s.Drain = drainSummary(&total.Unfinished, a.Drain)
	s.Retries = total.Retries
	s.Retried = total.Retried
	s.Skipped = total.Skipped
	s.Late = total.Late
	s.TPS = rate(total.Count)
	s.Latency = total.LatencyStats()
	s.Service = total.ServiceStats()
	s.Tx = make([]TxSummary, len(a.Tx))
	for i := range a.Tx {
		t := &a.Tx[i]
		s.Tx[i] = TxSummary{Name: t.Name, Group: t.Group, Transactions: t.Count, Failed: t.Failed(), Unfinished: t.Unfinished.Count(),
			CommittedInDrain: t.Unfinished.Committed, Errors: t.Errors,
			ErrorExamples: t.Examples, Retries: t.Retries, TPS: rate(t.Count), Latency: t.LatencyStats(), Service: t.ServiceStats(),
			Statements: statementSummaries(t.Statements)}
	}
}

// Histograms returns the accumulated latency histogram of each transaction
// type, keyed by name.
func (a *Accumulator) Histograms() map[string]*hdr.Histogram {
	m := make(map[string]*hdr.Histogram, len(a.Tx))
	for i := range a.Tx {
		m[a.Tx[i].Name] = a.Tx[i].Latency
	}
	return m
}

// FailedShare is the share of processed transactions that failed (0 to 1),
// those unfinished at the end of the measured time counted among the
// processed, and those of them that failed or had to be cancelled in the
// drain among the failed.
func (s *Summary) FailedShare() float64 {
	failed := s.Failed
	if d := s.Drain; d != nil {
		failed += d.Failed + d.Cancelled
	}
	if n := s.Transactions + s.Failed + s.Unfinished; n > 0 {
		return float64(failed) / float64(n)
	}
	return 0
}
