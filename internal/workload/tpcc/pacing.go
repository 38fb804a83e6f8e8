package tpcc

import (
	"math"
	"time"

	"github.com/pgarena/pgarena/internal/workload"
)

// Keying and think times of an emulated terminal user (clause 5.2.5), in
// effect with --keying-thinking. Indexed by transaction type.
var (
	// keyingTimes are the minimum keying times of clause 5.2.5.2: the user
	// fills the input screen before the transaction is sent.
	keyingTimes = [...]time.Duration{
		txNewOrder:    18 * time.Second,
		txPayment:     3 * time.Second,
		txOrderStatus: 2 * time.Second,
		txDelivery:    2 * time.Second,
		txStockLevel:  2 * time.Second,
	}
	// thinkMeans are the minimum mean think times of clause 5.2.5.4: the
	// user reads the output screen after the transaction.
	thinkMeans = [...]time.Duration{
		txNewOrder:    12 * time.Second,
		txPayment:     12 * time.Second,
		txOrderStatus: 10 * time.Second,
		txDelivery:    5 * time.Second,
		txStockLevel:  5 * time.Second,
	}
)

// thinkTruncation is the factor of clause 5.2.5.4: the think time
// distribution may be truncated at 10 times its mean.
const thinkTruncation = 10

var _ workload.Pacer = (*worker)(nil)

// Pauses implements workload.Pacer: with --keying-thinking, the fixed
// keying time of tx (clause 5.2.5.2) and a think time drawn from a negative
// exponential distribution, Tt = −ln(r) × μ with r uniform in (0, 1],
// truncated at 10μ (clause 5.2.5.4). The driver sleeps them; zeros when
// pacing is off, and then the worker's random stream is not touched.
func (wk *worker) Pauses(tx workload.TxType) (keying, thinking time.Duration) {
	if !wk.w.keyingThinking || int(tx) < 0 || int(tx) >= len(keyingTimes) {
		return 0, 0
	}
	return keyingTimes[tx], thinkTime(thinkMeans[tx], 1-wk.rng.Float64())
}

// thinkTime is −ln(r) × mean for r in (0, 1], at most thinkTruncation ×
// mean.
func thinkTime(mean time.Duration, r float64) time.Duration {
	t := -math.Log(r) * float64(mean)
	if limit := float64(thinkTruncation * mean); t > limit {
		t = limit
	}
	return time.Duration(t)
}
