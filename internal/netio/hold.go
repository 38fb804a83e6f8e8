package netio

import (
	"sync/atomic"
	"time"
)

// Hold lets raw connections (Linux) wait for an answer that is not there
// yet asleep in the kernel, in a raw ppoll(2) on their own socket, as
// pgbench's threads do, instead of parking in Go's netpoller: at most max
// at once, each until the answer comes or a deadline or Close wakes it
// (hold_linux.go), with no timer.
//
// A waiting goroutine keeps its P (the runtime does not know it sleeps), so
// a Hold is for runs with no more clients than Ps: each client then has a
// P and an OS thread of its own, and a round trip costs no netpoller
// park and wake-up, no hand-off through the thread blocked in epoll and no
// idle thread spinning on the core the server needs (at 2 clients on 2
// cores, about 1.5× the throughput; see docs/benchmarks.md). With more
// clients than Ps, a waiting P would keep answers that are ready from
// being read. What a wait delays (timers, other goroutines when every P
// waits) waits for the answer, or for the runtime's preemption signal
// (sysmon's, after 10 ms), which ends the wait for a yield; the garbage
// collector's stop-the-world signals the thread too (unless
// GODEBUG=asyncpreemptoff=1: then they wait for the answer). After two
// answers in a row slower than 1 ms, the next are waited for in the
// netpoller instead (parkAfter, hold_linux.go; 15 ms on a unix socket
// whose registration in the runtime's epoll was not found, quiet_linux.go).
type Hold struct {
	max   int32
	n     atomic.Int32
	epoch time.Time // the waits' clock reads are monotonic offsets from it (now)
}

// NewHold returns a Hold for up to max waiting clients; nil if max < 1.
func NewHold(max int) *Hold {
	if max < 1 {
		return nil
	}
	return &Hold{max: int32(max), epoch: time.Now().Add(-1)}
}

// now is the time since h was made in ns (at least 1): a read of the
// monotonic clock alone (time.Since; time.Now reads the wall clock too,
// twice the cost, and a parked round trip reads the clock twice).
func (h *Hold) now() int64 { return int64(time.Since(h.epoch)) }
