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

// holdFor bounds one wait in the kernel, holdShort one after a wait that
// was not ready (a statement that outlasts its wait: the netpoller waits
// for the rest, and the next statement may be long too).
//
// The bound is longer than the kernel's tick (4 ms at HZ=250, 10 ms at
// HZ=100), so that the wait's timer is never the CPU's next event: a
// shorter one makes every wait program the timer device, and cancel it
// when the answer comes, which on a virtual machine is an exit each way
// (a third of a round trip's client CPU at two clients; docs/benchmarks.md,
// part 10). What needs a P while every P waits (timers, the sampler, the
// run's clock) is late by at most the bound once, when a short statement
// is followed by a long one, and then by holdShort. The garbage
// collector's stop-the-world and the scheduler's preemption do not wait:
// their signal ends the wait (EINTR), unless asynchronous preemption is
// off.
const (
	holdFor   = 11 * time.Millisecond
	holdShort = time.Millisecond
)

// NewHold returns a Hold for up to max waiting clients; nil if max < 1.
func NewHold(max int) *Hold {
	if max < 1 {
		return nil
	}
	return &Hold{max: int32(max)}
}
