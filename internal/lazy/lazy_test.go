package lazy

import (
	"sync"
	"sync/atomic"
	"testing"
)

var built atomic.Int32

var squares = Value[[]int]{New: func() []int {
	built.Add(1)
	out := make([]int, 10)
	for i := range out {
		out[i] = i * i
	}
	return out
}}

// TestGetBuildsOnce has many goroutines race for the first Get: New runs
// once and every caller sees the same, complete value (run with -race).
func TestGetBuildsOnce(t *testing.T) {
	if n := built.Load(); n != 0 {
		t.Fatalf("built %d times before the first Get", n)
	}
	const callers = 16
	got := make([][]int, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { got[i] = squares.Get() })
	}
	wg.Wait()
	if n := built.Load(); n != 1 {
		t.Fatalf("New ran %d times, want 1", n)
	}
	for i, s := range got {
		if len(s) != 10 || s[9] != 81 || &s[0] != &got[0][0] {
			t.Fatalf("caller %d got %v, not the one built value", i, s)
		}
	}
}
