package local

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
)

// RemoveStale stops and removes temporary clusters ($TMPDIR/pgarena-* by env)
// whose pgarena process is gone: a process killed before it could run
// Remove — a test binary hitting its -timeout, say — leaves its server
// running. Clusters of live processes, named clusters and directories
// without a marker are never touched. It returns the directories removed.
func RemoveStale(env Env) ([]string, error) {
	markers, err := filepath.Glob(filepath.Join(env.tempDir(), tempPrefix+"*", markerFile))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, marker := range markers {
		meta, err := readMeta(marker)
		if err != nil || !meta.Temp || meta.OwnerPID <= 0 || ownerAlive(meta.OwnerPID, meta.OwnerStart) {
			continue
		}
		root := filepath.Dir(marker)
		dataDir := filepath.Join(root, "data")
		c := &Cluster{
			bin: Binaries{Dir: meta.BinDir, Version: meta.Version}, dataDir: dataDir, sockDir: dataDir,
			root: root, marker: marker, temp: true, env: env,
		}
		if meta.SocketDir != "" && strings.HasPrefix(filepath.Base(meta.SocketDir), socketPrefix) {
			c.ownSockDir = meta.SocketDir
		}
		if fileExists(dataDir) {
			if c.acct, err = serverAccountOf(dataDir); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := c.Remove(); err != nil {
			errs = append(errs, fmt.Errorf("removing stale cluster %s: %w", root, err))
			continue
		}
		removed = append(removed, root)
	}
	return removed, errors.Join(errs...)
}

// ownerAlive reports whether the process that created a temp cluster still
// runs (same pid and, when known, same start time).
func ownerAlive(pid int, start uint64) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	if now := processStart(pid); start != 0 && now != 0 && now != start {
		return false // the pid was reused
	}
	return true
}

// OwnerAlive reports whether process pid, started at start (ProcessStart;
// 0: unknown), still runs. Other packages that leave files or processes
// behind a pgarena process (internal/target/pooler) use it to find stale
// ones.
func OwnerAlive(pid int, start uint64) bool { return ownerAlive(pid, start) }

// ProcessStart is a process's start time in clock ticks since boot (0 when
// unknown): with its pid, it names one process even after the pid is reused.
func ProcessStart(pid int) uint64 { return processStart(pid) }
