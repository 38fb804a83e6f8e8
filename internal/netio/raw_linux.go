//go:build linux

package netio

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
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
func WrapRaw(nc net.Conn) net.Conn {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nc
	}
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return nc
	}
	c := &rawConn{Conn: nc, rc: rc}
	c.readFn = c.readFd
	c.writeFn = c.writeFd
	return c
}

// rawConn is a net.Conn whose Read and Write go through
// syscall.RawConn.Read/Write (the fd's locks, deadlines and netpoll waits)
// with raw system calls. The callbacks are made once, at wrap time, and
// share their arguments and results through fields guarded by rmu and wmu,
// so that no closure is allocated per call.
type rawConn struct {
	net.Conn // the wrapped connection: Close, deadlines, addresses
	rc       syscall.RawConn

	rmu    sync.Mutex
	readFn func(uintptr) bool
	rbuf   []byte
	rn     int
	rerr   error

	wmu     sync.Mutex
	writeFn func(uintptr) bool
	wbuf    []byte
	wn      int
	werr    error
}

func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	c.rbuf, c.rn, c.rerr = p, 0, nil
	err := c.rc.Read(c.readFn)
	n, rerr := c.rn, c.rerr
	c.rbuf = nil
	c.rmu.Unlock()
	if err != nil {
		return n, err
	}
	return n, rerr
}

func (c *rawConn) readFd(fd uintptr) bool {
	p := c.rbuf
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch e {
		case 0:
			if n == 0 {
				c.rerr = io.EOF
			}
			c.rn = int(n)
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		c.rerr = c.opError("read", os.NewSyscallError("read", e))
		return true
	}
}

func (c *rawConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	c.wbuf, c.wn, c.werr = p, 0, nil
	err := c.rc.Write(c.writeFn)
	n, werr := c.wn, c.werr
	c.wbuf = nil
	c.wmu.Unlock()
	if err != nil {
		return n, err
	}
	return n, werr
}

func (c *rawConn) writeFd(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		p := c.wbuf[c.wn:]
		n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			c.wn += int(n)
			continue
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		c.werr = c.opError("write", os.NewSyscallError("write", e))
		return true
	}
	return true
}

func (c *rawConn) opError(op string, err error) error {
	network := "tcp"
	if _, ok := c.Conn.(*net.UnixConn); ok {
		network = "unix"
	}
	return &net.OpError{Op: op, Net: network, Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
