package metrics

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
}

// ReplicaLag is one replica's lag over the measured time, in seconds.
type ReplicaLag struct {
	Name     string  `json:"name"`
	Kind     string  `json:"kind"`
	LagMaxS  float64 `json:"lag_max_s"`
	LagP99S  float64 `json:"lag_p99_s"`
	LagEndS  float64 `json:"lag_end_s"` // at the end of the load
	CatchUpS float64 `json:"catch_up_s"`
	CaughtUp bool    `json:"caught_up"`
}

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
	r.SustainableTPS = Sustainable(transactions, durationS, r.CatchUpS)
	r.SustainableRatio = 0
	if tps > 0 {
		r.SustainableRatio = r.SustainableTPS / tps
	}
}
