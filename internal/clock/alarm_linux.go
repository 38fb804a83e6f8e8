//go:build linux

package clock

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// timerfd is an Alarm: a timerfd(2) on CLOCK_MONOTONIC, non-blocking, so
// that os.NewFile registers it in the runtime's network poller; a Wait arms
// it for d and reads it, parked in the poller as a socket's read is.
type timerfd struct {
	f  *os.File
	rc syscall.RawConn
}

// timerfd_create(2)'s clock and flags.
const (
	clockMonotonic = 1
	tfdFlags       = syscall.O_NONBLOCK | syscall.O_CLOEXEC // TFD_NONBLOCK | TFD_CLOEXEC
)

func newAlarm() Alarm {
	fd, _, e := syscall.RawSyscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdFlags, 0)
	if e != 0 {
		return nil
	}
	f := os.NewFile(fd, "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	return &timerfd{f: f, rc: rc}
}

// Wait arms the timer inside the poller's read, after the poller has
// forgotten any earlier readiness (RawRead resets it before its first
// call), so that it waits at once, with no read to fail first, and reads
// once when woken: two system calls a wait, arming and reading. The read
// is a raw system call (a timerfd's read never blocks): it does not wake
// the runtime's sysmon thread from its sleep as a Syscall does.
func (t *timerfd) Wait(d time.Duration) error {
	armed := false
	var err error
	rerr := t.rc.Read(func(fd uintptr) bool {
		if !armed {
			armed = true
			if e := settime(fd, d); e != 0 {
				err = os.NewSyscallError("timerfd_settime", e)
				return true
			}
			return false // wait for the expiry (or Ring)
		}
		var expirations [8]byte
		_, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&expirations[0])), uintptr(len(expirations)))
		switch e {
		case 0:
			return true
		case syscall.EAGAIN, syscall.EINTR:
			return false // woken early: wait on
		}
		err = os.NewSyscallError("read", e)
		return true
	})
	if rerr != nil {
		return rerr
	}
	return err
}

// Ring arms the timer to expire at once: the Wait in progress reads it.
func (t *timerfd) Ring() { t.arm(0) }

// arm sets the timer to expire once, d from now.
func (t *timerfd) arm(d time.Duration) error {
	var e syscall.Errno
	err := t.rc.Control(func(fd uintptr) { e = settime(fd, d) }) // the fd stays open meanwhile
	if err == nil && e != 0 {
		err = os.NewSyscallError("timerfd_settime", e)
	}
	return err
}

// settime arms timerfd fd to expire once, d from now (at least 1 ns: zero
// disarms); it clears the expirations not read yet (fs/timerfd.c).
func settime(fd uintptr, d time.Duration) syscall.Errno {
	spec := [2]syscall.Timespec{1: syscall.NsecToTimespec(int64(max(d, 1)))}
	_, _, e := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	return e
}

func (t *timerfd) Close() error { return t.f.Close() }
