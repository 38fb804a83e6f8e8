//go:build !linux

package pooler

import "syscall"

// dieWithParent: no parent-death signal outside Linux; a pooler whose
// pgarena was killed runs until RemoveStale stops it at the next run.
func dieWithParent(*syscall.SysProcAttr, syscall.Signal) {}
