package driver

import "time"

// closedLoop is pgbench's model: a client starts its next transaction as
// soon as the previous one ends, so the intended start is the actual one.
// With -t a client stops after that many transactions.
type closedLoop struct {
	cfg *Config // its Transactions: per client; 0: until the run ends (one word: no allocation in the interface)
}

func (l closedLoop) next(stopNew <-chan struct{}, done int) (time.Time, bool) {
	select {
	case <-stopNew:
		return time.Time{}, false
	default:
	}
	if n := l.cfg.Transactions; n > 0 && done >= n {
		return time.Time{}, false
	}
	return time.Time{}, true
}

func (closedLoop) open() bool { return false }
