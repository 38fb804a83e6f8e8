package metrics

import (
	"fmt"
	"strings"
)

// Replication is how the replicas of a run kept up: lag while the load
// ran (pgarena's heartbeat: the age of the oldest beat a replica had not
// shown), the catch-up after it, and the sustainable rate — committed
// transactions over the measured time plus the catch-up, the rate the
// replicas keep up with.
type Replication struct {
	Replicas []ReplicaLag `json:"replicas"`
	// CatchUpS is how long the slowest replica took, after the load, to
	// hold everything the primary had committed (the timeout if it did
	// not: CaughtUp false, and the sustainable rate is then an upper bound).
	CatchUpS float64 `json:"catch_up_s"`
	CaughtUp bool    `json:"caught_up"`
	// SustainableTPS is Transactions / (DurationS + CatchUpS).
	SustainableTPS float64 `json:"sustainable_tps"`
	// SustainableRatio is SustainableTPS / TPS (1: the replicas keep up).
	SustainableRatio float64 `json:"sustainable_ratio"`
	// SustainableUpperBound: a replica did not catch up, so the catch-up
	// is at least CatchUpS and the sustainable rate at most SustainableTPS.
	SustainableUpperBound bool `json:"sustainable_upper_bound"`
}

// ReplicaLag is one replica's lag over the measured time, in seconds.
// While a replica cannot be read, its lag is the age of the oldest beat
// after the newest one it was seen to hold: it keeps growing.
type ReplicaLag struct {
	Name     string  `json:"name"`
	Kind     string  `json:"kind"`
	LagMaxS  float64 `json:"lag_max_s"`
	LagP99S  float64 `json:"lag_p99_s"`
	LagEndS  float64 `json:"lag_end_s"` // at the end of the load
	CatchUpS float64 `json:"catch_up_s"`
	CaughtUp bool    `json:"caught_up"`
	// FailedReads counts the heartbeat reads that failed (the replica
	// down, unreachable or not answering); UnreadableS is the time they
	// cover.
	FailedReads int     `json:"failed_reads"`
	UnreadableS float64 `json:"unreadable_s"`
	// Error is why the replica could not be read when the catch-up wait
	// gave up on it as down (its server refusing connections, or down).
	Error string `json:"error,omitempty"`
}

// UnreadableLimitS is how long a replica may go unread over a run before
// the run is degraded (one read failing on a loaded host is not a finding
// about the replica; a second without any is).
const UnreadableLimitS = 1.0

// Sustainable is the rate the replicas keep up with: committed
// transactions over the measured time plus the catch-up time.
func Sustainable(transactions int64, durationS, catchUpS float64) float64 {
	if durationS+catchUpS <= 0 {
		return 0
	}
	return float64(transactions) / (durationS + catchUpS)
}

// Finish fills the catch-up of the slowest replica and the sustainable
// rate for transactions committed at tps over durationS.
func (r *Replication) Finish(transactions int64, durationS, tps float64) {
	r.CaughtUp = true
	r.CatchUpS = 0
	for _, l := range r.Replicas {
		r.CatchUpS = max(r.CatchUpS, l.CatchUpS)
		r.CaughtUp = r.CaughtUp && l.CaughtUp
	}
	r.SustainableUpperBound = !r.CaughtUp
	r.SustainableTPS = Sustainable(transactions, durationS, r.CatchUpS)
	r.SustainableRatio = 0
	if tps > 0 {
		r.SustainableRatio = r.SustainableTPS / tps
	}
}

// Problem says why the replication figures do not describe replicas that
// kept up ("" when every replica caught up and could be read): a replica
// that did not catch up, or could not be read for UnreadableLimitS or more.
// Such a run is degraded.
func (r *Replication) Problem() string {
	if r == nil {
		return ""
	}
	var out []string
	for _, l := range r.Replicas {
		switch {
		case !l.CaughtUp && l.Error != "":
			out = append(out, fmt.Sprintf("replica %s did not catch up within %.1f s: it is down (%s; sustainable tps is an upper bound)", l.Name, l.CatchUpS, l.Error))
		case !l.CaughtUp:
			out = append(out, fmt.Sprintf("replica %s did not catch up within %.1f s (--catch-up-timeout; sustainable tps is an upper bound)", l.Name, l.CatchUpS))
		}
		if l.UnreadableS >= UnreadableLimitS {
			out = append(out, fmt.Sprintf("replica %s could not be read for %.1f s (lag counted from the newest beat it was seen to hold)", l.Name, l.UnreadableS))
		}
	}
	return strings.Join(out, "; ")
}
