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

func (t *timerfd) Wait(d time.Duration) error {
	if err := t.arm(d); err != nil {
		return err
	}
	var expirations [8]byte
	_, err := t.f.Read(expirations[:])
	return err
}

// Ring arms the timer to expire at once: the Wait in progress reads it.
func (t *timerfd) Ring() { t.arm(0) }

// arm sets the timer to expire once, d from now.
func (t *timerfd) arm(d time.Duration) error {
	// it_interval zero, it_value d (at least 1 ns: zero disarms).
	spec := [2]syscall.Timespec{1: syscall.NsecToTimespec(int64(max(d, 1)))}
	var e syscall.Errno
	err := t.rc.Control(func(fd uintptr) { // the fd stays open meanwhile
		_, _, e = syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	})
	if err == nil && e != 0 {
		err = os.NewSyscallError("timerfd_settime", e)
	}
	return err
}

func (t *timerfd) Close() error { return t.f.Close() }
