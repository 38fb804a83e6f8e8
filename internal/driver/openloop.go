package driver

import (
	"time"

	"github.com/pgarena/pgarena/internal/clock"
)

// dispatch feeds the open-loop queue: each arrival is sent when it is due,
// carrying its scheduled time, so a transaction that waits for a free
// client has that wait in its latency (no coordinated omission). If the
// queue is full the dispatcher blocks, and the arrivals it then sends late
// still carry their scheduled times. It closes the queue when the schedule
// ends, or after limit arrivals (-t with -R: each client's transactions;
// 0: no limit).
func dispatch(clk clock.Clock, start time.Time, s Schedule, process string, seed uint64, seg Segment, limit int64, queue chan<- time.Time, stop <-chan struct{}) {
	defer close(queue)
	arr := &segmentArrivals{all: newArrivals(s, process, seed), seg: seg}
	timer := clk.NewTimer(time.Hour)
	timer.Stop()
	for sent := int64(0); limit == 0 || sent < limit; sent++ {
		off, ok := arr.next()
		if !ok {
			return
		}
		due := start.Add(off)
		if d := clock.Until(clk, due); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-stop:
				timer.Stop()
				return
			}
		}
		select {
		case queue <- due:
		case <-stop:
			return
		}
	}
}

// openLoop takes a client's transactions from its group's arrival queue:
// each was due at its scheduled time, however long it waited for a free
// client (no coordinated omission).
type openLoop struct {
	queue <-chan time.Time
	limit int // -t: the client's transactions (0: until the schedule ends)
}

func (l openLoop) next(stopNew <-chan struct{}, done int) (time.Time, bool) {
	if l.limit > 0 && done >= l.limit {
		return time.Time{}, false
	}
	// A stopping run wins over queued arrivals: a select between the two
	// would pick at random and keep starting transactions after the stop.
	select {
	case <-stopNew:
		return time.Time{}, false
	default:
	}
	select {
	case t, ok := <-l.queue:
		return t, ok
	case <-stopNew:
		return time.Time{}, false
	}
}

func (openLoop) open() bool { return true }
