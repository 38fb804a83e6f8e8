package metrics

import (
	"time"

	"github.com/pgarena/pgarena/internal/pgerr"
)

// Unfinished counts the transactions still running when the measured time
// of a run ended (-T, a schedule's length, a stop): a third outcome beside
// committed and failed. They are none of the run's transactions or
// failures; their time so far (from the intended start to the end of the
// measured time) is kept beside the latencies, and what became of them in
// the drain that follows is counted apart.
type Unfinished struct {
	SoFarMaxUS int64 `json:"so_far_max_us"`
	SoFarSumUS int64 `json:"so_far_sum_us"`
	// Outcomes in the drain: each unfinished transaction is one of these.
	Committed int64 `json:"committed"`
	Failed    int64 `json:"failed"`
	Cancelled int64 `json:"cancelled"` // by the drain's deadline or a stop
	// Errors counts the failed and cancelled by class; Examples keeps the
	// first and last of each class with what it said (SQLSTATE, message),
	// as for the measured time's failures.
	Errors   ErrorCounts   `json:"errors,omitzero"`
	Examples ErrorExamples `json:"error_examples,omitempty"`
}

// Outcomes of an unfinished transaction in the drain.
const (
	DrainCommitted = iota
	DrainFailed
	DrainCancelled
)

// Count is the number of unfinished transactions.
func (u *Unfinished) Count() int64 { return u.Committed + u.Failed + u.Cancelled }

func (u *Unfinished) add(o *Unfinished) {
	u.SoFarMaxUS = max(u.SoFarMaxUS, o.SoFarMaxUS)
	u.SoFarSumUS += o.SoFarSumUS
	u.Committed += o.Committed
	u.Failed += o.Failed
	u.Cancelled += o.Cancelled
	u.Errors.Add(&o.Errors)
	u.Examples.Merge(o.Examples)
}

// Unfinished counts a transaction of type tx that was running for soFar
// when the measured time ended, and its outcome in the drain
// (DrainCommitted, DrainFailed or DrainCancelled); a failed or cancelled
// one is counted in its class (pgerr.ClassNone: none known) with what its
// failure said, d.
func (h *Handle) Unfinished(tx int, soFar time.Duration, outcome int, class pgerr.ErrorClass, d pgerr.ErrorDetail) {
	us := max(int64(soFar/time.Microsecond), 0)
	h.seq.Add(1)
	u := &h.cur.Load().tx[tx].rareOf().unfinished
	u.SoFarMaxUS = max(u.SoFarMaxUS, us)
	u.SoFarSumUS += us
	switch outcome {
	case DrainCommitted:
		u.Committed++
	case DrainFailed:
		u.Failed++
	default:
		u.Cancelled++
	}
	if outcome != DrainCommitted && class != pgerr.ClassNone {
		u.Errors[class]++
		u.Examples.Note(class, d)
	}
	h.seq.Add(1)
}

// DrainSummary is how a run's measured time ended: how long the
// transactions still running then (Summary.Unfinished) had been running,
// and what became of them in the drain after it, which is never part of
// the measured time.
type DrainSummary struct {
	SoFarMaxMS float64 `json:"so_far_max_ms"` // the longest-running one's time at the end
	SoFarAvgMS float64 `json:"so_far_avg_ms"`
	DrainS     float64 `json:"drain_s"`
	Committed  int64   `json:"committed_in_drain"`
	Failed     int64   `json:"failed_in_drain"`
	// Cancelled were still running when the drain's deadline came (or a
	// stop): the run had to cancel them. They count as failed for
	// --max-error-rate.
	Cancelled int64 `json:"cancelled"`
	// Errors counts the failed and cancelled by class, ErrorExamples keeps
	// the first and last of each class with its SQLSTATE and message (a
	// cancelled statement's is the server's 57014).
	Errors        ErrorCounts   `json:"errors,omitzero"`
	ErrorExamples ErrorExamples `json:"error_examples,omitempty"`
	// Abandoned counts clients that did not even stop after being
	// cancelled; their transactions are among Cancelled.
	Abandoned int `json:"abandoned,omitempty"`
}

// drainSummary summarises u (nil when nothing was unfinished).
func drainSummary(u *Unfinished, drain time.Duration) *DrainSummary {
	n := u.Count()
	if n == 0 {
		return nil
	}
	return &DrainSummary{SoFarMaxMS: round3(float64(u.SoFarMaxUS) / 1000),
		SoFarAvgMS: round3(float64(u.SoFarSumUS) / float64(n) / 1000), DrainS: round3(drain.Seconds()),
		Committed: u.Committed, Failed: u.Failed, Cancelled: u.Cancelled, Errors: u.Errors, ErrorExamples: u.Examples}
}
