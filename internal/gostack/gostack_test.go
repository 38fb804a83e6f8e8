package gostack

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
)

// Each At leaves its goroutine on a stack of its size: n goroutines
// parked after it hold at least n such stacks (a 2 KB stack each without).
// No GC runs meanwhile: it would shrink the parked goroutines' stacks and
// change the size new goroutines start with.
func TestAtGrowsTheStack(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 256
	for _, c := range []struct {
		name string
		at   func()
		size uint64
	}{{"At4K", At4K, 4 << 10}, {"At8K", At8K, 8 << 10}, {"At64K", At64K, 64 << 10}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var started, done sync.WaitGroup
		release := make(chan struct{})
		started.Add(n)
		done.Add(n)
		for range n {
			go func() {
				defer done.Done()
				c.at()
				started.Done()
				<-release
			}()
		}
		started.Wait()
		runtime.ReadMemStats(&after)
		close(release)
		done.Wait()
		if got := after.StackInuse - before.StackInuse; got < n*c.size*3/4 {
			t.Errorf("%s: %d goroutines added %d KB of stacks, want about %d KB", c.name, n, got>>10, n*c.size>>10)
		}
	}
}
