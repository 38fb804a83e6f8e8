//go:build linux

package netio

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WrapRaw returns a net.Conn that keeps nc's socket in Go's netpoller but
// reads and writes it with raw system calls, if nc is a plain *net.TCPConn
// or *net.UnixConn; otherwise nc itself. The returned connection owns nc.
//
// The socket stays non-blocking, so a read or write never sleeps in the
// kernel and needs none of the runtime's system call bookkeeping (which,
// when every client is waiting for the server, wakes the runtime's monitor
// thread on each call). Waiting, deadlines and Close are the netpoller's,
// exactly as for nc.
//
// A small Write made while no deadline is set and no Read is in progress is
// kept (copied) and sent by the next Read, from inside the netpoller's read
// callback. A connection with a Hold (ApplyHold) may then wait for the
// answer without first trying a read that would find nothing yet (EAGAIN):
// in the Hold's ppoll, or, when that does not take it, is woken (a
// deadline, Close) or expects a slow answer (parkSlow), in the netpoller.
// Sending there, after the runtime has reset the socket's read readiness for
// this Read, is what makes waiting first safe: the answer's readiness event
// comes after the reset, so it cannot be lost (were the request sent before
// the Read, the runtime could record the answer's arrival and then the
// Read's reset erase it, and a wait-first Read would never wake). That
// holds only if nothing else is on its way, so a Read waits first only after
// a read that ended with a ReadyForQuery message and emptied the socket (the
// server had answered all it was asked) and no bytes but the kept ones went
// out since; otherwise answers to earlier requests (a pipeline) may be there
// already, and a server blocked writing more of them would never wake it.
// Whether to wait first is then guessed per connection from how often the
// answer was already there right after the send; without a Hold a Read
// always reads first (see guessHit). Bytes reach the socket in Write order;
// a kept write is sent no later than the next Read, Write or Close (if a
// deadline interrupts that Read first, by the one after). Kept bytes that
// do not fit the socket's buffer are sent by a goroutine of their own while
// the Read waits for the answer (sendAside). A send error of a kept write is
// returned by the Read that sent it, or by sendAside's next Write.
func WrapRaw(nc net.Conn) net.Conn { return wrapRaw(nc, nil) }

// wrapRaw is WrapRaw with the waits of h (nil: none).
func wrapRaw(nc net.Conn, h *Hold) net.Conn {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nc
	}
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return nc
	}
	c := &rawConn{Conn: nc, rc: rc, settled: true, hold: h, wake: -1}
	if h != nil {
		c.wake = newWake()
		c.parkAfter = int64(parkAfterUnix)
		if _, ok := nc.(*net.TCPConn); ok {
			c.parkAfter = int64(parkAfterTCP)
		} else {
			rc.Control(func(fd uintptr) { c.quiet = quietWrites(int(fd)) })
			if c.quiet {
				c.parkAfter = int64(parkAfterTCP) // parks as cheaply
			}
		}
	}
	c.readFn = c.readFd
	c.writeFn = c.writeFd
	return c
}

// maxKept is the largest write (with those already kept) that is kept for
// the next Read to send; larger ones are sent at once. A request of a
// benchmark statement is some tens to hundreds of bytes.
const maxKept = 4096

// rawConn is a net.Conn whose Read and Write go through
// syscall.RawConn.Read/Write (the fd's locks, deadlines and netpoll waits)
// with raw system calls. The callbacks are made once, at wrap time, and
// share their arguments and results through fields guarded by rmu and wmu,
// so that no closure is allocated per call.
//
// Locks: rmu makes Reads one at a time; wmu makes sends one at a time and
// guards kept (it is held while a Write waits for the socket); mu, never
// held while waiting, guards reading and closed. Invariant: while a Read is
// in progress, kept bytes are sent either by its callback (which then
// waits first) or by whoever holds wmu, since Write keeps nothing once
// reading is set and sends what is kept before its own bytes.
//
// With hundreds of clients a connection's memory is out of the CPU's cache
// each time its client's turn comes, so the fields a round trip touches
// (a kept Write, then a Read) come first, in the struct's first four cache
// lines; its size is a multiple of 64 bytes (checked below), so Go's
// allocator puts it at the start of a line.
type rawConn struct {
	// Touched per round trip. Guarded by rmu:
	rc        syscall.RawConn
	readFn    func(uintptr) bool
	rmu       sync.Mutex
	pending   []byte // given back (Unread): the next reads return these first
	rbuf      []byte
	rn        int
	rerr      error
	in        []byte // ReadMore's buffer, made on first use
	inLen     int    // bytes of in that ReadMore returned last
	hold      *Hold  // nil: an answer not yet here is always waited for in the netpoller
	eagain    int    // reads that found nothing (tests: wait-first works)
	hitRate   int    // with a Hold: how often the answer was there right after the send, of 256 (moving average)
	trips     int    // requests sent by readFd that could wait first (with a Hold)
	first     bool   // readFd's first call of this Read
	sendStuck bool   // the kept bytes did not fit the socket: Read sends the rest
	probing   bool   // this Read's first read follows its send: it updates hitRate
	settled   bool   // the last read ended with ReadyForQuery and emptied the socket
	// Guarded by wmu:
	wmu  sync.Mutex
	kept []byte // written, not yet sent
	// Guarded by mu:
	mu      sync.Mutex
	reading bool // a Read is in progress: writes are not kept
	closed  bool

	rdSet, wdSet atomic.Bool // a read, a write deadline is set: writes are not kept
	sentOther    atomic.Bool // bytes went out other than from readFd: the next Read clears settled

	// Not touched per round trip.
	net.Conn      // the wrapped connection: addresses
	held     uint // waits of hold that found the answer (rmu)
	// A held wait (hold_linux.go):
	yielded   int64       // when it last yielded its P (Hold.now; rmu)
	parkedAt  int64       // when a wait was left to the netpoller (parkSlow; Hold.now); 0: none (rmu)
	parked    uint        // waits left to the netpoller as slow (rmu)
	parkAfter int64       // an answer that took this long (ns) or more: wait for the next in the netpoller (see parkAfterTCP)
	parkSlow  bool        // the next wait is the netpoller's (noteAnswer; rmu)
	slowRun   uint8       // answers in a row that took parkAfter or more, up to 2 (rmu)
	quiet     bool        // the runtime's epoll does not watch the socket for writing (quiet_linux.go; wmu)
	wake      int32       // eventfd that ends a wait; -1: none (mu, or a Read in progress)
	waiting   atomic.Bool // a wait is in progress
	closing   atomic.Bool // Close was called
	// sends through the netpoller (wmu)
	writeFn  func(uintptr) bool
	wbuf     []byte
	wn       int
	werr     error
	asideErr error // sendAside's send failed: the next Write returns it (wmu)
	_        [rawConnPad]byte
}

// rawConnPad pads rawConn to a multiple of 64 bytes on 64-bit platforms;
// the array's length below fails to compile when it does not.
const rawConnPad = 8

var _ [0]struct{} = [unsafe.Sizeof(rawConn{}) % 64 * (unsafe.Sizeof(uintptr(0)) / 8)]struct{}{} // 64-bit platforms

func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		c.rmu.Unlock()
		return n, nil
	}
	// No defers: Read is on every client's deepest stack (under the
	// statement's wait), and a deferred call's closure is kept in its frame.
	c.mu.Lock()
	c.reading = true
	c.mu.Unlock()
	if c.sentOther.Load() && c.sentOther.Swap(false) {
		c.settled = false // answers to those bytes may be coming
	}
	var n int
	var err error
	for {
		c.rbuf, c.rn, c.rerr, c.first, c.sendStuck = p, 0, nil, true, false
		err = c.rc.Read(c.readFn)
		n = c.rn
		c.rbuf = nil
		if err != nil || !c.sendStuck {
			break
		}
		c.sendAside()
	}
	if err == nil {
		err = c.rerr
	}
	c.mu.Lock()
	c.reading = false
	if c.closed {
		c.closeWake()
	}
	c.mu.Unlock()
	c.rmu.Unlock()
	return n, err
}

// inSize is ReadMore's first buffer, enough for the answers of most
// benchmark statements (pgbench's select-only answer is ~70 bytes; every
// client holds one: 256 bytes, not 1 KB, is 7.5 MB fewer at 10,000
// clients); inGrown is the most it grows to by itself when reads fill it
// (pgconn reads in 8 KB chunks too).
const (
	inSize  = 256
	inGrown = 8192
)

// ReadMore reads the next bytes of the stream into the connection's own
// buffer, after the last keep bytes of what the previous call returned
// (moved to its front), and returns the buffer's filled part. It is for a
// caller that parses an answer's messages itself (package roundtrip), so
// that they are not copied through another reader's buffer.
// Bytes given back by Unread come first (then keep must be 0). The buffer
// grows when keep fills it, and up to inGrown when reads do; the result is
// valid until the next ReadMore. Reading otherwise is Read's.
func (c *rawConn) ReadMore(keep int) ([]byte, error) {
	if len(c.pending) > 0 {
		c.inLen = copy(c.in, c.pending)
		c.pending = nil
		return c.in[:c.inLen], nil
	}
	if keep > 0 || c.in == nil {
		c.keep(keep)
	} else {
		c.inLen = 0
	}
	// Making and growing the buffer are out of line (keep, grow), so
	// that ReadMore's frame is small: it is on a client's deepest stack,
	// under the answer's wait (see workload.SmallStacker).
	n, err := c.Read(c.in[c.inLen:])
	if c.inLen += n; c.inLen == len(c.in) && len(c.in) < inGrown {
		c.grow()
	}
	return c.in[:c.inLen], err
}

// ReserveAnswers makes ReadMore's buffer ahead of its first use (see
// roundtrip.Ready).
func (c *rawConn) ReserveAnswers() {
	if c.in == nil {
		c.in = make([]byte, inSize)
	}
}

// grow doubles the buffer, keeping its filled part.
//
//go:noinline
func (c *rawConn) grow() { c.in = doubled(c.in, c.inLen) }

// keep moves the last keep bytes of what ReadMore returned last to the
// front of the buffer (made on first use, grown when they fill it), as
// the buffer's filled part.
//
//go:noinline
func (c *rawConn) keep(keep int) {
	if c.in == nil {
		c.in = make([]byte, inSize)
	}
	if keep > 0 {
		copy(c.in, c.in[c.inLen-keep:c.inLen])
	}
	if c.inLen = keep; keep == len(c.in) {
		c.grow()
	}
}

// doubled returns a buffer twice b's length holding b's first n bytes.
func doubled(b []byte, n int) []byte {
	d := make([]byte, 2*len(b))
	copy(d, b[:n])
	return d
}

// Unread gives back the last n bytes of what ReadMore returned last: the
// next Read or ReadMore returns them first.
func (c *rawConn) Unread(n int) { c.pending = c.in[c.inLen-n : c.inLen] }

// sendAside starts sending the kept bytes that did not fit the socket's
// buffer (nothing was there to read either) from a goroutine of their own,
// holding wmu until they are sent, so that the Read goes on to wait for
// the answer. Waiting in the Read for the socket to take them could
// deadlock: the server may be blocked writing answers to earlier requests
// of a pipeline, reading nothing until the client reads, and pgconn guards
// its writes against that deadlock (a background reader), not its reads.
// If wmu is busy, its holder sends the kept bytes. A send error is
// returned by the next Write; the Read sees the socket's state itself
// (the error, a deadline, or the peer's close).
//
//go:noinline
func (c *rawConn) sendAside() {
	if !c.wmu.TryLock() {
		return
	}
	if len(c.kept) == 0 {
		c.wmu.Unlock()
		return
	}
	go func() {
		c.asideErr = c.sendKept()
		c.sentOther.Store(true)
		c.wmu.Unlock()
	}()
}

// readFd is the read callback: true when done (data, EOF or an error), false
// to wait for readability and be called again.
func (c *rawConn) readFd(fd uintptr) bool {
	if c.first {
		c.first = false
		// If wmu is busy, its holder sends what is kept (see rawConn).
		if c.wmu.TryLock() {
			// The usual case (all kept bytes go at once) is sent here,
			// not in sendKeptFd: readFd runs at the bottom of a
			// client's deepest stack (statement, pgconn's reader, the
			// netpoller's RawRead), where one more frame doubles every
			// client goroutine's stack (4 to 8 KB).
			sent, err := false, error(nil)
			if k := c.kept; len(k) > 0 {
				n, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&k[0])), uintptr(len(k)), unix.MSG_NOSIGNAL, 0, 0)
				switch e {
				case 0:
					c.kept = k[:copy(k, k[n:])]
				case unix.EINTR, unix.EAGAIN:
				default: // not again: the socket's error is reported once
					c.kept = k[:0]
					err = c.opError("write", e)
				}
				sent = true
				if err == nil && len(c.kept) > 0 {
					_, err = c.sendKeptFd(fd) // the rest, or EINTR, EAGAIN
				}
			}
			c.wmu.Unlock()
			switch {
			case err == nil && sent && c.settled && c.hold != nil:
				// Only a held connection waits first (see guessHit).
				c.trips++
				if !c.guessHit() {
					// Sent after this Read reset the socket's read
					// readiness, and nothing else was to come: the
					// answer's event is still to come.
					if !c.holdWaitFirst(fd) {
						return false
					}
				} else {
					c.probing = true
				}
			case err == errStuck:
				c.sendStuck = true // unless there is something to read
			case err != nil:
				c.rerr = err
				return true
			}
		}
		// Nothing was kept, or another sent it, perhaps before the
		// reset, so its answer may be here with no event to come: read.
	}
	p := c.rbuf
	for {
		// recvfrom, not read: the same on a stream socket, without the
		// file layer's checks (vfs_read; 2% of a 1,000-client run's CPU).
		n, _, e := syscall.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0, 0, 0)
		switch e {
		case 0:
			if n == 0 {
				c.rerr = io.EOF
			}
			c.rn = int(n)
			// Settled: the server has answered all it was asked and
			// waits for the client (what the first read of the next
			// Read finds says something about the server's speed, and
			// the next Read may wait first).
			c.settled = int(n) < len(p) && n >= 6 && p[n-6] == 'Z' && p[n-5]|p[n-4]|p[n-3] == 0 && p[n-2] == 5
			c.sendStuck = false // the next Read sends the rest first
			if c.probing {
				c.probing = false
				c.hitRate += (256 - c.hitRate) / 8
			}
			if c.hold != nil && c.parkedAt != 0 {
				c.unparked()
			}
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			c.eagain++
			if c.probing {
				c.probing = false
				c.hitRate -= c.hitRate / 8
			}
			if !c.sendStuck && c.hold != nil && c.holdWait(fd) != notReady {
				continue
			}
			return c.sendStuck
		}
		c.rerr = c.opError("read", e)
		c.sendStuck = false
		return true
	}
}

// guessHit tells whether a held connection reads right after sending a
// request (the answer is likely there already) rather than wait first.
// Waiting first is a ppoll and a read (2 calls), reading first pgbench's 1
// or 3 (3-2p, with p the share of answers already there): reading first is
// chosen from a half, and a wait tells by itself whether the answer was
// there (holdWaitFirst), so no request has to read first to find out.
//
// A connection without a Hold always reads first, as pgbench and Go's
// net.Conn do, though its first read often finds nothing: on a local
// server, clients that park straight after their send cost the server more
// than the reads they save (at 1,000 clients 25-35% fewer
// transactions per second and 40% more client CPU per transaction, and a
// guess from probes never left waiting first: see docs/benchmarks.md,
// "Many clients").
func (c *rawConn) guessHit() bool { return c.hitRate >= 256/2 }

// errStuck: the socket's send buffer is full.
var errStuck = syscall.EAGAIN

// sendKeptFd sends the kept bytes without waiting; sent tells whether there
// were any. On errStuck the unsent rest stays kept. c.wmu is held.
func (c *rawConn) sendKeptFd(fd uintptr) (sent bool, err error) {
	if len(c.kept) == 0 {
		return false, nil
	}
	done := 0
	for done < len(c.kept) {
		p := c.kept[done:]
		n, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			done += int(n)
			continue
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			c.kept = c.kept[:copy(c.kept, c.kept[done:])]
			return true, errStuck
		}
		c.kept = c.kept[:0]
		return true, c.opError("write", e)
	}
	c.kept = c.kept[:0]
	return true, nil
}

func (c *rawConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	c.mu.Lock()
	if !c.reading && !c.closed && !c.rdSet.Load() && !c.wdSet.Load() && len(c.kept)+len(p) <= maxKept {
		c.kept = append(c.kept, p...)
		// wmu before mu: a Read that sets reading after this finds wmu
		// free (or held by a Write that sends what is kept).
		c.wmu.Unlock()
		c.mu.Unlock()
		return len(p), nil
	}
	c.mu.Unlock()
	defer c.wmu.Unlock()
	if err := c.asideErr; err != nil {
		c.asideErr = nil
		return 0, err
	}
	n, err := 0, c.sendKept()
	if err == nil {
		n, err = c.send(p)
	}
	c.sentOther.Store(true)
	return n, err
}

// sendKept sends the kept bytes, waiting for the socket as a Write does.
// c.wmu is held.
func (c *rawConn) sendKept() error {
	if len(c.kept) == 0 {
		return nil
	}
	_, err := c.send(c.kept)
	c.kept = c.kept[:0]
	return err
}

// send writes p through the netpoller. c.wmu is held.
func (c *rawConn) send(p []byte) (int, error) {
	c.wbuf, c.wn, c.werr = p, 0, nil
	err := c.rc.Write(c.writeFn)
	n, werr := c.wn, c.werr
	c.wbuf = nil
	if err != nil {
		return n, err
	}
	return n, werr
}

func (c *rawConn) writeFd(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		p := c.wbuf[c.wn:]
		n, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			c.wn += int(n)
			continue
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			if c.quiet {
				// The netpoller waits: it must see the socket writable.
				loudWrites(int(fd))
				c.quiet = false
			}
			return false
		}
		c.werr = c.opError("write", e)
		return true
	}
	return true
}

// Close sends what is kept (pgconn's Terminate, usually) if the socket takes
// it at once, then closes the connection. It never waits for a Write.
func (c *rawConn) Close() error {
	c.closing.Store(true)
	c.wakeWait()
	c.mu.Lock()
	c.closed = true
	if !c.reading {
		c.closeWake()
	}
	c.mu.Unlock()
	if c.wmu.TryLock() {
		if len(c.kept) > 0 {
			c.rc.Control(func(fd uintptr) { c.sendKeptFd(fd) })
			c.kept = c.kept[:0]
		}
		c.wmu.Unlock()
	}
	return c.Conn.Close()
}

func (c *rawConn) SetDeadline(t time.Time) error {
	c.rdSet.Store(!t.IsZero())
	c.wdSet.Store(!t.IsZero())
	err := c.Conn.SetDeadline(t)
	if !t.IsZero() && c.hold != nil {
		c.wakeWait() // the netpoller waits with the deadline
	}
	return err
}

func (c *rawConn) SetReadDeadline(t time.Time) error {
	c.rdSet.Store(!t.IsZero())
	err := c.Conn.SetReadDeadline(t)
	if !t.IsZero() && c.hold != nil {
		c.wakeWait()
	}
	return err
}

func (c *rawConn) SetWriteDeadline(t time.Time) error {
	c.wdSet.Store(!t.IsZero())
	return c.Conn.SetWriteDeadline(t)
}

// opError is the error of a failed system call of op (read, write), as
// the net package returns it.
func (c *rawConn) opError(op string, e syscall.Errno) error {
	network := "tcp"
	if _, ok := c.Conn.(*net.UnixConn); ok {
		network = "unix"
	}
	return &net.OpError{Op: op, Net: network, Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, e)}
}
