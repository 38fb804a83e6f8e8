package replica

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pgarena/pgarena/internal/target/local"
)

// dieWithParent has a slon daemon killed when pgarena ends, by kill -9
// too (Linux's parent-death signal). The worker slon forks does not get
// it: recordSlon and killStaleSlons deal with it.
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// slonRecord is the file naming a slon process group and the pgarena
// process that owns it.
func slonRecord(pgid int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("pgarena-slon-%d", pgid))
}

// recordSlon writes slonRecord for a slon started in its own process
// group pgid; forget removes it.
func recordSlon(pgid int) (forget func()) {
	path := slonRecord(pgid)
	self := os.Getpid()
	os.WriteFile(path, []byte(fmt.Sprintf("%d %d\n", self, local.ProcessStart(self))), 0o600)
	return func() { os.Remove(path) }
}

// killStaleSlons kills the slon processes of the groups recorded by a
// pgarena that is gone (killed: the worker slon forked outlived it).
func killStaleSlons() {
	records, _ := filepath.Glob(filepath.Join(os.TempDir(), "pgarena-slon-*"))
	for _, rec := range records {
		pgid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(rec), "pgarena-slon-"))
		b, rerr := os.ReadFile(rec)
		var owner int
		var start uint64
		if err != nil || rerr != nil {
			continue
		}
		if _, err := fmt.Sscan(string(b), &owner, &start); err != nil || local.OwnerAlive(owner, start) {
			continue
		}
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			pid, err := strconv.Atoi(p.Name())
			if err != nil {
				continue
			}
			cmd, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
			if g, err := syscall.Getpgid(pid); err == nil && g == pgid && bytes.HasPrefix(cmd, []byte("slon\x00")) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		os.Remove(rec)
	}
}
