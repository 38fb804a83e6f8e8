package pooler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pgarena/pgarena/internal/target/local"
)

// ownerFile, in a pooler's directory, names the pgarena process that
// started the pooler and the pooler's process (each pid and start time),
// so that a later run removes a pooler whose pgarena was killed (RemoveStale).
const ownerFile = "pgarena-owner"

// writeOwner records this process as the owner of the pooler pid in dir.
func writeOwner(dir string, pid int) error {
	me := os.Getpid()
	data := fmt.Sprintf("%d %d %d %d\n", me, local.ProcessStart(me), pid, local.ProcessStart(pid))
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(data), 0o600)
}

// RemoveStale stops and removes the poolers in tempDir (the directories
// pgarena-KIND-*) whose pgarena process is gone: one killed (kill -9)
// before it could stop its pooler. On Linux the pooler dies with pgarena
// (the parent-death signal); its directory, the password file included,
// stays until this runs. Directories without an owner file and poolers of
// live pgarena processes are never touched. It returns the directories
// removed.
func RemoveStale(tempDir string) ([]string, error) {
	var removed []string
	var errs []error
	for k := range kinds() {
		owners, err := filepath.Glob(filepath.Join(tempDir, "pgarena-"+k+"-*", ownerFile))
		if err != nil {
			return nil, err
		}
		for _, f := range owners {
			var owner, pid int
			var ownerStart, start uint64
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			if n, _ := fmt.Sscan(string(b), &owner, &ownerStart, &pid, &start); n != 4 || owner <= 0 || local.OwnerAlive(owner, ownerStart) {
				continue
			}
			dir := filepath.Dir(f)
			if err := killGroup(pid, start); err != nil {
				errs = append(errs, fmt.Errorf("stale %s in %s: %w", k, dir, err))
				continue
			}
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, fmt.Errorf("removing stale %s directory: %w", k, err))
				continue
			}
			removed = append(removed, dir)
		}
	}
	return removed, errors.Join(errs...)
}

// killGroup kills the process group of pid (the pooler leads its own)
// if pid is still the process that started at start, and waits up to 5 s
// for pid to be gone.
func killGroup(pid int, start uint64) error {
	if pid <= 0 || start == 0 || local.ProcessStart(pid) != start {
		return nil // gone, or the pid was reused
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if local.ProcessStart(pid) != start {
			return nil
		}
	}
	return fmt.Errorf("process %d did not exit after SIGKILL", pid)
}
