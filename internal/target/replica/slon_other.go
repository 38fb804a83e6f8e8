//go:build !linux

package replica

import "syscall"

// dieWithParent: no parent-death signal outside Linux; a slon daemon
// whose pgarena was killed exits when its servers are removed.
func dieWithParent(*syscall.SysProcAttr) {}

func recordSlon(int) (forget func()) { return func() {} }

func killStaleSlons() {}
