package sampler

import (
	"fmt"
	"math"

	"github.com/prometheus/procfs"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times (100 on
// Linux, as procfs assumes too).
const clockTicks = 100

// startSlack bounds how far a process's start time in /proc may be from the
// backend_start PostgreSQL reports for it: /proc/stat gives the boot time
// in whole seconds.
const startSlack = 3.0

// findPostmaster returns the pid of the postmaster that forked backend, as
// this host's /proc sees it: backend's parent, once backend's start time
// there matches started (pg_stat_activity.backend_start, seconds since the
// epoch). A server in another pid namespace (a container reached through a
// loopback port) fails that check.
func findPostmaster(fs procfs.FS, backend int, started float64) (int, error) {
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
// come and go stay counted. A root that is gone has no entry.
func treeCPU(fs procfs.FS, roots map[int]bool) (map[int]float64, error) {
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, err
	}
	out := map[int]float64{}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // exited meanwhile: its time is its parent's now
		}
		root := st.PID
		if !roots[root] {
			if root = st.PPID; !roots[root] {
				continue
			}
		}
		out[root] += float64(st.UTime+st.STime)/clockTicks + float64(st.CUTime+st.CSTime)/clockTicks
	}
	return out, nil
}
