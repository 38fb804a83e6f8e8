package driver

import "time"

// closedLoop is pgbench's model: a client starts its next transaction as
// soon as the previous one ends, so the intended start is the actual one.
// With -t a client stops after that many transactions.
type closedLoop struct {
	transactions int // per client; 0: until the run ends
}

func (l closedLoop) next(stopNew <-chan struct{}, done int) (time.Time, bool) {
	select {
	case <-stopNew:
		return time.Time{}, false
	default:
	}
	if l.transactions > 0 && done >= l.transactions {
		return time.Time{}, false
	}
	return time.Time{}, true
}

func (closedLoop) open() bool { return false }
