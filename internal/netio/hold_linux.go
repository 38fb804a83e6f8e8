//go:build linux

package netio

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A held wait sleeps in ppoll(2) on two descriptors and no timeout: the
// socket, readable when the answer comes, and the connection's wake-up
// eventfd, which SetDeadline, SetReadDeadline and Close write while a wait
// is in progress (waiting): a stop interrupts statements through the
// socket's deadline, and the netpoller, which owns deadlines and Close,
// then takes over. A wait never starts with a read deadline set or after
// Close. waiting and rdSet/closing are a Dekker pair: a wait stores
// waiting, then loads the others; a setter stores its flag, then loads
// waiting (under mu, which also keeps the eventfd open while it is
// written). The eventfd stays readable until a wait reads it, so a wake-up
// written before the ppoll starts still ends it.
//
// A signal interrupts the ppoll (EINTR): the runtime's preemption (sysmon
// after 10 ms on one goroutine, a stop-the-world of the garbage collector)
// is then given its way with runtime.Gosched before the wait goes on. So
// what a wait keeps from running on its P (timers, the goroutine that stops
// the run when every P waits) waits at most for the answer or ~10–20 ms.
// With GODEBUG=asyncpreemptoff=1 there is no such signal: a stop-the-world
// or, when every P waits, a stop then waits for the answer.
//
// What a held wait still costs beyond pgbench's: its P stays running for
// the runtime, so sysmon wakes every 10 ms (a sleep, a poll of the network,
// a context switch) instead of sleeping, and a wait that spans a whole
// tick gets its preemption signal (one more sleep); with 10 ms answers
// that is about one more sleep per transaction, with 30 ms answers five
// (bench/slow-answers.sh). So after two answers in a row that took
// parkAfter or more (parkSlow), the next waits are the netpoller's until
// one is faster: the goroutine parks, every P is idle, sysmon sleeps
// until a timer, and on a TCP socket a round trip is pgbench's: a send,
// two epoll_pwait (one that finds nothing) and a read, one sleep. So is it
// on a unix socket once the runtime's epoll no longer watches it for
// writing (quiet_linux.go); where that could not be done, the server's
// read of each request wakes the parked thread for nothing (up to two more
// epoll_pwait and a sleep per round trip), so it parks only for answers
// slower than its held wait's extra sleeps cost (parkAfterUnix).

// newWake returns the eventfd that ends a connection's held waits, or -1 if
// it cannot be made (then the connection's waits are the netpoller's).
func newWake() int32 {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return -1
	}
	return int32(fd)
}

// wakeWait ends c's held wait in progress, if any: after a deadline was
// set or Close was called.
func (c *rawConn) wakeWait() {
	c.mu.Lock()
	if c.waiting.Load() && c.wake >= 0 {
		one := uint64(1)
		unix.Write(int(c.wake), (*[8]byte)(unsafe.Pointer(&one))[:])
	}
	c.mu.Unlock()
}

// closeWake closes the wake-up eventfd once no Read can wait on it:
// Close when no Read is in progress, else the Read's end. c.mu is held.
func (c *rawConn) closeWake() {
	if c.wake >= 0 {
		unix.Close(int(c.wake))
		c.wake = -1
	}
}

// holdWait waits in c.hold (see Hold) for fd to become readable; callers
// check c.hold first, so that without a Hold no frame is added below
// readFd (the 4 KB client stack; with a Hold there are no more clients
// than Ps). A client whose answers keep coming within its waits never
// parks, so a wait that returns 1 ms or more after the last yield lets the
// goroutines that wait for a P run (the run's clock; and sysmon then sees
// no goroutine run for 10 ms, so it sends no preemption signal, unless one
// wait is that long). With parkSlow it leaves the wait to the netpoller
// (notReady) and notes when (parkedAt, kept if the netpoller wakes the read
// for nothing; readFd's unparked then judges the answer's time from it).
func (c *rawConn) holdWait(fd uintptr) int {
	h := c.hold
	if c.wake < 0 {
		return notReady
	}
	if c.parkSlow {
		if c.parkedAt == 0 {
			c.parkedAt = h.now()
		}
		c.parked++
		return notReady
	}
	if h.n.Add(1) > h.max {
		h.n.Add(-1)
		return notReady
	}
	r, start, now := c.sleep(fd)
	h.n.Add(-1)
	if r != notReady {
		c.held++
		c.noteAnswer(now - start)
		if now-c.yielded >= int64(holdYield) {
			c.yielded = now
			runtime.Gosched()
		}
	}
	return r
}

// holdYield is the longest a held client keeps its P between yields when
// its answers come within its waits.
const holdYield = time.Millisecond

// An answer that took this long or more has the next waited for in the
// netpoller (parkSlow): the held wait's yield point (parkAfterTCP, also a
// unix socket's once quiet); on a unix socket still watched for writing,
// where a parked round trip may cost a sleep more, one and a half sysmon
// ticks (-c 1, per transaction, voluntary switches held / parked /
// pgbench: 3 ms answers 1.3-1.6 / 2.0-2.5 / 1.0, 10 ms 2.1 / 2.5-3.9 / 1.0,
// 30 ms 6.2 / 1.3 / 1.0).
const (
	parkAfterTCP  = holdYield
	parkAfterUnix = 15 * time.Millisecond
)

// sleep waits in ppoll(2), with no timeout, until fd is readable or the
// wait is woken (a deadline, Close). It tells whether fd is readable and
// whether it was at once, and when it began and returned (Hold.now).
func (c *rawConn) sleep(fd uintptr) (r int, start, now int64) {
	c.waiting.Store(true)
	pfd := [2]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: c.wake, Events: unix.POLLIN}}
	start = c.hold.now()
	var e syscall.Errno
	for {
		if c.rdSet.Load() || c.closing.Load() {
			c.waiting.Store(false)
			return notReady, start, start
		}
		_, _, e = syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd[0])), 2, 0, 0, 0, 0)
		if e != unix.EINTR {
			break
		}
		runtime.Gosched() // a preemption, a stop-the-world: let it happen
	}
	c.waiting.Store(false)
	now = c.hold.now()
	if pfd[1].Revents != 0 {
		var b [8]byte
		unix.Read(int(c.wake), b[:])
	}
	switch {
	case e != 0 || pfd[0].Revents&unix.POLLIN == 0:
		return notReady, start, now
	case now-start < int64(atOnce):
		return readyAtOnce, start, now
	}
	return readyLater, start, now
}

// unparked notes that a wait holdWait left to the netpoller ended with
// data: whether the next waits go there too.
//
//go:noinline
func (c *rawConn) unparked() {
	now := c.hold.now()
	c.noteAnswer(now - c.parkedAt)
	c.parkedAt, c.yielded = 0, now
}

// noteAnswer notes that an answer took d ns: after two in a row of
// parkAfter or more, the next waits are the netpoller's (parkSlow), until
// a faster one. Two, so that fast answers a loaded machine delays now and
// then keep their held waits (at two clients on two Ps, a parked wait
// costs the runtime's spinning threads).
func (c *rawConn) noteAnswer(d int64) {
	switch {
	case d < c.parkAfter:
		c.slowRun = 0
	case c.slowRun < 2:
		c.slowRun++
	}
	c.parkSlow = c.slowRun >= 2
}

// holdWaitFirst is holdWait for a Read that waits before its first read:
// whether the answer was there already counts as a read-first hit or miss
// would (see guessHit).
//
//go:noinline
func (c *rawConn) holdWaitFirst(fd uintptr) bool {
	switch c.holdWait(fd) {
	case notReady:
		return false
	case readyAtOnce:
		c.hitRate += (256 - c.hitRate) / 8
	default:
		c.hitRate -= c.hitRate / 8
	}
	return true
}

// Results of holdWait.
const (
	notReady    = iota // no Hold's place, woken, or an error: the netpoller waits
	readyAtOnce        // readable when the wait began
	readyLater         // readable after a sleep
)

// atOnce: a wait that returned within this was not a sleep (a sleep and
// wake-up alone take longer), so the answer was there when it began.
const atOnce = 2 * time.Microsecond
