package driver

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
)

// TestConnectsCollectBetweenConnects: while clients connect, no garbage
// collection runs in the middle of a connect (its goroutine deep in
// pgconn's connect path, whose frames a collection's stack scan would read
// from .gopclntab), yet garbage is collected, so the heap grows as under
// GOGC; GOGC is back afterwards. Eight goroutines make 256 MB of garbage
// in 1 MB "connects", in 4 KB pieces.
func TestConnectsCollectBetweenConnects(t *testing.T) {
	cycles := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	const workers, connects, pieces = 8, 32, 256
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	start := cycles()
	g := newConnectGC()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		inside int // collections that ran during a connect
	)
	sink := make([][]byte, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range connects {
				g.begin()
				c0 := cycles()
				for range pieces {
					sink[w] = make([]byte, 4<<10)
				}
				if c1 := cycles(); c1 != c0 {
					mu.Lock()
					inside += int(c1 - c0)
					mu.Unlock()
				}
				g.end()
			}
		}()
	}
	wg.Wait()
	g.done()
	if inside > 0 {
		t.Errorf("%d collections ran in the middle of a connect", inside)
	}
	if n := cycles() - start; n < 4 {
		t.Errorf("%d collections while 256 MB of garbage was made, want several", n)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC is %d after the connects, want 100 back", got)
	}
}
