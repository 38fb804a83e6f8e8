package driver

import (
	"time"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/gostack"
)

// ticker fires at start+k·every for k = 1, 2, … measured from the absolute
// start, so interval boundaries do not drift however late a tick is served.
// On the real clock it waits on a clock.Alarm where there is one, so that
// no timer of Go's runtime is pending between ticks (a parked client's
// every wait would then carry a timeout: see clock.Alarm).
type ticker struct {
	C     chan time.Time
	quit  chan struct{}
	alarm clock.Alarm // nil: the clock's timers
}

func newTicker(start time.Time, every time.Duration, clk clock.Clock) *ticker {
	t := &ticker{C: make(chan time.Time), quit: make(chan struct{}), alarm: clock.NewAlarm(clk)}
	go func() {
		gostack.At4K() // a timer's first use reaches 4 KB
		alarm := t.alarm
		for k := 1; ; k++ {
			next := start.Add(time.Duration(k) * every)
			if !t.wait(clk, &alarm, clock.Until(clk, next)) {
				return
			}
			n := clk.Now()
			if n.Before(next) {
				n = next
			}
			select {
			case t.C <- n:
			case <-t.quit:
				return
			}
		}
	}()
	return t
}

// wait waits d on *alarm, or on clk's timers if it is nil or fails (then
// it sets it nil); false if the ticker was stopped first.
func (t *ticker) wait(clk clock.Clock, alarm *clock.Alarm, d time.Duration) bool {
	if *alarm != nil {
		start := clk.Now()
		if (*alarm).Wait(d) == nil {
			return true
		}
		select {
		case <-t.quit:
			return false
		default: // not closed: it failed
		}
		*alarm = nil
		d -= clk.Now().Sub(start)
	}
	timer := clk.NewTimer(d)
	select {
	case <-timer.C:
		return true
	case <-t.quit:
		timer.Stop()
		return false
	}
}

func (t *ticker) stop() {
	close(t.quit)
	if t.alarm != nil {
		t.alarm.Close()
	}
}
