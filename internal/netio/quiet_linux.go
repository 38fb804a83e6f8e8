//go:build linux

package netio

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A parked wait on a unix socket would wake for nothing once per round
// trip: the runtime's epoll watches every socket for writing too
// (EPOLLIN|EPOLLOUT|EPOLLRDHUP|EPOLLET), and a unix socket reports
// EPOLLOUT each time the peer reads from it (unix_write_space), so the
// server's read of each request wakes the thread asleep in epoll_pwait
// (a context switch and two epoll_pwait more per round trip). A TCP socket
// reports it only after its send buffer was full (SOCK_NOSPACE).
//
// So a held unix connection takes EPOLLOUT out of its socket's
// registration in the runtime's epoll (EPOLL_CTL_MOD, keeping the
// runtime's data as it is; the runtime only ever adds and deletes), found
// in /proc/self/fdinfo (epoll's "tfd: FD events: MASK data: DATA" lines,
// Linux 3.8). It puts EPOLLOUT back before a send waits in the netpoller
// (writeFd, under the fd's write lock, so Close cannot delete the
// registration meanwhile); EPOLL_CTL_MOD of a writable socket queues the
// event at once. Where the registration is not found as the runtime makes
// it, nothing changes.

// goPollEvents is the runtime's registration of a socket (netpollopen).
const goPollEvents = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET

// goEpoll is the runtime's epoll, once found (there is one per process);
// 0: not looked for yet.
var goEpoll atomic.Int32

// quietWrites takes EPOLLOUT out of fd's registration in the runtime's
// epoll; it tells whether it did.
func quietWrites(fd int) bool {
	ep, data, ok := goRegistration(fd)
	return ok && modEvents(ep, fd, goPollEvents&^unix.EPOLLOUT, data) == nil
}

// loudWrites puts EPOLLOUT back into fd's registration, which quietWrites
// changed.
func loudWrites(fd int) error {
	ep := int(goEpoll.Load())
	ev, data, ok := watched(ep, fd)
	if !ok || ev != goPollEvents&^unix.EPOLLOUT {
		return errors.New("netio: the socket's registration in the runtime's epoll changed")
	}
	return modEvents(ep, fd, goPollEvents, data)
}

func modEvents(ep, fd int, events uint32, data uint64) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(uint32(data)), Pad: int32(uint32(data >> 32))}
	return unix.EpollCtl(ep, unix.EPOLL_CTL_MOD, fd, &ev)
}

// goRegistration finds the epoll that watches fd as the runtime's netpoller
// does (goPollEvents) and that registration's data.
func goRegistration(fd int) (ep int, data uint64, ok bool) {
	if ep := int(goEpoll.Load()); ep > 0 {
		ev, data, ok := watched(ep, fd)
		return ep, data, ok && ev == goPollEvents
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1, 0, false
	}
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l != "anon_inode:[eventpoll]" {
			continue
		}
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ev, data, ok := watched(n, fd); ok && ev == goPollEvents {
			goEpoll.Store(int32(n))
			return n, data, true
		}
	}
	return -1, 0, false
}

// watched reads epoll ep's fdinfo for fd's registration: its events (less
// EPOLLERR and EPOLLHUP, which epoll always adds) and data.
func watched(ep, fd int) (events uint32, data uint64, ok bool) {
	f, err := os.Open("/proc/self/fdinfo/" + strconv.Itoa(ep))
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// tfd:       13 events: 80002005 data: 7f0c5a6b0018  pos:0 ino:... sdev:...
		w := strings.Fields(sc.Text())
		if len(w) < 6 || w[0] != "tfd:" || w[1] != strconv.Itoa(fd) || w[2] != "events:" || w[4] != "data:" {
			continue
		}
		ev, err1 := strconv.ParseUint(w[3], 16, 32)
		data, err2 := strconv.ParseUint(w[5], 16, 64)
		return uint32(ev) &^ (unix.EPOLLERR | unix.EPOLLHUP), data, err1 == nil && err2 == nil
	}
	return 0, 0, false
}
