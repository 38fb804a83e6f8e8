package driver

import (
	"runtime"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/clock"
)

func TestTickerOnTheRealClockTicksOnItsBoundaries(t *testing.T) {
	const every = 30 * time.Millisecond
	start := time.Now()
	tk := newTicker(start, every, clock.Real())
	defer tk.stop()
	if tk.alarm == nil && runtime.GOOS == "linux" {
		t.Fatal("the real clock's ticker waits on the runtime's timers on Linux")
	}
	for k := 1; k <= 3; k++ {
		select {
		case n := <-tk.C:
			want := start.Add(time.Duration(k) * every)
			if n.Before(want) || time.Now().Before(want) {
				t.Fatalf("tick %d at +%s (now +%s), want from +%s", k, n.Sub(start), time.Since(start), want.Sub(start))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no tick %d within 10 s", k)
		}
	}
}
