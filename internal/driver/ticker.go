package driver

import (
	"time"

	"github.com/pgarena/pgarena/internal/clock"
	"github.com/pgarena/pgarena/internal/gostack"
)

// ticker fires at start+k·every for k = 1, 2, … measured from the absolute
// start, so interval boundaries do not drift however late a tick is served.
type ticker struct {
	C    chan time.Time
	quit chan struct{}
}

func newTicker(start time.Time, every time.Duration, clk clock.Clock) *ticker {
	t := &ticker{C: make(chan time.Time), quit: make(chan struct{})}
	go func() {
		gostack.At4K() // a timer's first use reaches 4 KB
		for k := 1; ; k++ {
			next := start.Add(time.Duration(k) * every)
			timer := clk.NewTimer(clock.Until(clk, next))
			select {
			case <-timer.C:
			case <-t.quit:
				timer.Stop()
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

func (t *ticker) stop() { close(t.quit) }
