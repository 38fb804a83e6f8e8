package replica

import "syscall"

// dieWithParent has a slon daemon killed when pgarena ends, by kill -9
// too (Linux's parent-death signal).
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
