//go:build linux

package netio

import (
	"io"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Wrap returns a net.Conn doing blocking system calls on nc's socket if nc
// is a plain *net.TCPConn or *net.UnixConn, and nc itself otherwise (TLS,
// or a socket that cannot be switched). The returned connection owns nc.
//
// Deadlines work as in package net, with one difference: a deadline that
// expires while a Read or Write is blocked in the kernel interrupts it by
// shutting the socket down (shutdown(2)), so the connection is unusable
// afterwards (Read and Write fail). pgconn closes a connection after any
// I/O error, and pgarena sets a deadline only to end a connection's use, so
// nothing is lost. A deadline that expires while no I/O is in progress only
// makes later I/O fail with a timeout until it is moved, as in package net.
func Wrap(nc net.Conn) net.Conn {
	var network string
	switch nc.(type) {
	case *net.TCPConn:
		network = "tcp"
	case *net.UnixConn:
		network = "unix"
	default:
		return nc
	}
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return nc
	}
	fd := -1
	cerr := rc.Control(func(s uintptr) {
		if err = unix.SetNonblock(int(s), false); err == nil {
			fd = int(s)
		}
	})
	if cerr != nil || err != nil || fd < 0 {
		return nc
	}
	c := &blockingConn{nc: nc, fd: fd, network: network, epoch: time.Now()}
	c.rd.at.Store(noDeadline)
	c.wd.at.Store(noDeadline)
	return c
}

const noDeadline = math.MaxInt64

// blockingConn is a net.Conn over a socket in blocking mode. Read and Write
// are one system call each in the common case; the Go runtime treats them as
// blocking system calls (the thread sleeps in the kernel, its P goes to
// other goroutines).
//
// The file descriptor stays owned by nc (closed by nc.Close); Close first
// waits for the Reads and Writes in progress to return, so the descriptor is
// never used after it was closed (and possibly reused).
type blockingConn struct {
	nc      net.Conn
	fd      int
	network string
	epoch   time.Time // deadlines are kept as offsets from it (monotonic)

	rd, wd  deadline
	closing atomic.Bool // Close was called
	broken  atomic.Bool // shut down to interrupt I/O at a deadline

	mu     sync.Mutex // guards the deadlines' timers, closed, and the fd against shutdown after close
	closed bool
}

// deadline is one direction's deadline and the operations in progress in
// that direction. at and ops form a Dekker pair: an operation increments
// ops, then loads at; a deadline setter stores at, then loads ops. Either
// the operation sees the expired deadline, or the setter sees the operation
// (and interrupts it).
type deadline struct {
	at    atomic.Int64 // offset from epoch in ns; noDeadline: none
	ops   atomic.Int32
	timer *time.Timer // guarded by mu
	gen   uint64      // guarded by mu; which timer is current
}

func (c *blockingConn) Read(p []byte) (int, error) {
	c.rd.ops.Add(1)
	n, err := c.read(p)
	c.rd.ops.Add(-1)
	return n, err
}

func (c *blockingConn) read(p []byte) (int, error) {
	if err := c.check(&c.rd, "read"); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(c.fd, p)
		switch {
		case err == nil && n > 0:
			return n, nil
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			// Someone made the socket non-blocking again: wait for it.
			if err := c.poll(unix.POLLIN); err != nil {
				return 0, c.opError("read", err)
			}
			continue
		}
		if ierr := c.interrupted(&c.rd, "read"); ierr != nil {
			return 0, ierr
		}
		if err == nil {
			return 0, io.EOF
		}
		return 0, c.opError("read", os.NewSyscallError("read", err))
	}
}

func (c *blockingConn) Write(p []byte) (int, error) {
	c.wd.ops.Add(1)
	n, err := c.write(p)
	c.wd.ops.Add(-1)
	return n, err
}

func (c *blockingConn) write(p []byte) (int, error) {
	if err := c.check(&c.wd, "write"); err != nil {
		return 0, err
	}
	done := 0
	for done < len(p) {
		n, err := send(c.fd, p[done:])
		if n > 0 {
			done += n
		}
		switch {
		case err == nil:
			continue
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if err := c.poll(unix.POLLOUT); err != nil {
				return done, c.opError("write", err)
			}
			continue
		}
		if ierr := c.interrupted(&c.wd, "write"); ierr != nil {
			return done, ierr
		}
		return done, c.opError("write", os.NewSyscallError("write", err))
	}
	return done, nil
}

// send writes p with MSG_NOSIGNAL: a peer that went away is an EPIPE error,
// without a SIGPIPE.
func send(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// poll waits until the socket is ready for ev (only when the socket is not in
// blocking mode, which it should be).
func (c *blockingConn) poll(ev int16) error {
	fds := []unix.PollFd{{Fd: int32(c.fd), Events: ev}}
	for {
		_, err := unix.Poll(fds, -1)
		if err != unix.EINTR {
			if err != nil {
				return os.NewSyscallError("poll", err)
			}
			return nil
		}
	}
}

// check is what an operation finds before its system call: a closed
// connection, an expired deadline, a socket shut down by an earlier one.
func (c *blockingConn) check(d *deadline, op string) error {
	if c.closing.Load() {
		return c.opError(op, net.ErrClosed)
	}
	if at := d.at.Load(); at != noDeadline && time.Since(c.epoch) >= time.Duration(at) {
		return c.opError(op, os.ErrDeadlineExceeded)
	}
	if c.broken.Load() {
		return c.opError(op, errInterrupted)
	}
	return nil
}

// interrupted tells whether a failed system call failed because Close or a
// deadline shut the socket down, and returns the error to report if so.
func (c *blockingConn) interrupted(d *deadline, op string) error {
	if !c.closing.Load() && !c.broken.Load() {
		return nil
	}
	if err := c.check(d, op); err != nil {
		return err
	}
	return c.opError(op, errInterrupted)
}

// errInterrupted is the error of I/O on a connection whose socket was shut
// down by an expired deadline (once the deadline was moved). It wraps
// net.ErrClosed: the connection is over.
// A type, not fmt.Errorf, so the package has no init work (archtest's
// TestNoInitFunctions).
var errInterrupted error = interruptedError{}

type interruptedError struct{}

func (interruptedError) Error() string {
	return "connection interrupted at a deadline: use of closed network connection"
}
func (interruptedError) Unwrap() error { return net.ErrClosed }

func (c *blockingConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.network, Source: c.nc.LocalAddr(), Addr: c.nc.RemoteAddr(), Err: err}
}

// Close interrupts Reads and Writes in progress, waits for them to return,
// and closes the socket.
func (c *blockingConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	c.closing.Store(true)
	for _, d := range []*deadline{&c.rd, &c.wd} {
		if d.timer != nil {
			d.timer.Stop()
			d.timer = nil
		}
		d.gen++
	}
	if c.rd.ops.Load()+c.wd.ops.Load() > 0 {
		_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	}
	c.mu.Unlock()
	// Operations started before closing was set return promptly: the
	// socket is shut down (or they see closing before their system call).
	for c.rd.ops.Load()+c.wd.ops.Load() > 0 {
		time.Sleep(50 * time.Microsecond)
	}
	return c.nc.Close()
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.nc.LocalAddr() }
func (c *blockingConn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

func (c *blockingConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.setDeadline(&c.rd, t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.setDeadline(&c.wd, t) }

func (c *blockingConn) setDeadline(d *deadline, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opError("set deadline", net.ErrClosed)
	}
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.gen++
	if t.IsZero() {
		d.at.Store(noDeadline)
		return nil
	}
	at := t.Sub(c.epoch)
	if at == noDeadline {
		at--
	}
	d.at.Store(int64(at))
	c.expireLocked(d, d.gen)
	return nil
}

// expireLocked interrupts d's operations in progress if d's deadline has
// passed, or arms a timer to look again when it will have. c.mu is held.
func (c *blockingConn) expireLocked(d *deadline, gen uint64) {
	if c.closed || d.gen != gen {
		return
	}
	at := d.at.Load()
	if at == noDeadline {
		return
	}
	if wait := time.Duration(at) - time.Since(c.epoch); wait > 0 {
		d.timer = time.AfterFunc(wait, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.expireLocked(d, gen)
		})
		return
	}
	if d.ops.Load() > 0 {
		c.broken.Store(true)
		_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	}
}
