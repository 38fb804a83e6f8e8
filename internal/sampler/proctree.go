package sampler

import (
	"bytes"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times (100 on
// Linux, as procfs assumes too).
const clockTicks = 100

// startSlack bounds how far a process's start time in /proc may be from the
// backend_start PostgreSQL reports for it: /proc/stat gives the boot time
// in whole seconds.
const startSlack = 3.0

// onThisHost reports whether a server address is this machine's: a
// loopback address or name, a Unix socket, this machine's host name, or an
// address of one of its interfaces (no DNS lookup: a name must be the
// host name to count).
func onThisHost(host string) bool {
	if hostIsLocal(host) {
		return true
	}
	if name, err := os.Hostname(); err == nil && strings.EqualFold(host, name) {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// findPostmaster returns the pid of the postmaster that forked backend, as
// this host's /proc sees it: backend's parent, once backend's start time
// there matches started (pg_stat_activity.backend_start, seconds since the
// epoch). A server in another pid namespace (a container reached through a
// loopback port) fails that check.
func findPostmaster(fs procFS, backend int, started float64) (int, error) {
	p, err := fs.Proc(backend)
	if err != nil {
		return 0, fmt.Errorf("its backend (pid %d) is not in this host's /proc: another pid namespace or host", backend)
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	at, err := st.StartTime()
	if err != nil {
		return 0, err
	}
	if math.Abs(at-started) > startSlack {
		return 0, fmt.Errorf("pid %d in this host's /proc is not its backend (started %.0f s apart): another pid namespace or host", backend, math.Abs(at-started))
	}
	return st.PPID, nil
}

// treeCPU returns the CPU seconds of each root's process tree with one scan
// of /proc: the root's and its children's user and system time, with the
// time of the children they reaped (cutime, cstime), so that backends that
// come and go stay counted. A root that is gone has no entry. It parses
// /proc/<pid>/stat itself: procfs's full parse costs ten times more, and a
// scan runs every tick.
func treeCPU(root string, roots map[int]bool) (map[int]float64, error) {
	d, err := os.Open(root)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	out := map[int]float64{}
	buf := make([]byte, 1024)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		ppid, secs, ok := readStat(filepath.Join(root, name, "stat"), buf)
		if !ok {
			continue // exited meanwhile: its time is its parent's now
		}
		if roots[pid] {
			out[pid] += secs
		} else if roots[ppid] {
			out[ppid] += secs
		}
	}
	return out, nil
}

// readStat reads a /proc/<pid>/stat: the parent's pid and utime + stime +
// cutime + cstime in seconds (proc(5): fields 4 and 14 to 17, counted
// after the command name in parentheses, which may hold spaces).
func readStat(path string, buf []byte) (ppid int, secs float64, ok bool) {
	fd, err := openProc(path) // no os.File: a scan opens every process's file
	if err != nil {
		return 0, 0, false
	}
	n, err := unix.Read(fd, buf)
	_ = unix.Close(fd)
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	line := buf[:n]
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(line[i+1:])) // from field 3, the state
	if len(fields) < 15 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	if err != nil {
		return 0, 0, false
	}
	var ticks int64
	for _, f := range fields[11:15] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ticks += v
	}
	return ppid, float64(ticks) / clockTicks, true
}
