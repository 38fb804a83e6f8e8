package netio

import (
	"sync/atomic"
	"time"
)

// Hold lets raw connections (Linux) wait for an answer that is not there
// yet asleep in the kernel, in a raw ppoll(2) on their own socket, as
// pgbench's threads do, instead of parking in Go's netpoller: at most max
// at once, each for at most holdFor, after which the netpoller waits.
//
// A waiting goroutine keeps its P (the runtime does not know it sleeps), so
// a Hold is for runs with no more clients than Ps: each client then has a
// P and an OS thread of its own, and a round trip costs no netpoller
// park and wake-up, no hand-off through the thread blocked in epoll and no
// idle thread spinning on the core the server needs (at 2 clients on 2
// cores, about 1.5× the throughput; see docs/benchmarks.md). With more
// clients than Ps, a waiting P would keep answers that are ready from
// being read. What a wait delays (timers, other goroutines when every P
// waits) is delayed by at most holdFor; the garbage collector's
// stop-the-world and the scheduler's preemption signal the thread, which
// ends the wait (unless GODEBUG=asyncpreemptoff=1: then they wait too).
type Hold struct {
	max int32
	n   atomic.Int32
}

// holdFor bounds one wait in the kernel. It is shorter than the kernel's
// tick, so every wait programs the CPU's timer device and cancels it (on a
// virtual machine an exit each way, about a third of the client's CPU at
// two clients), but what a wait delays is delayed by at most this: with 11
// ms a script of 4 ms statements at -c 2 -j 2 had a p99.9 latency of 16 ms
// where 1 ms gave 5.5 (docs/benchmarks.md, "Few clients").
const holdFor = time.Millisecond

// NewHold returns a Hold for up to max waiting clients; nil if max < 1.
func NewHold(max int) *Hold {
	if max < 1 {
		return nil
	}
	return &Hold{max: int32(max)}
}
