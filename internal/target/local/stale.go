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
