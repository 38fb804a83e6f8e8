package pooler

import "syscall"

// dieWithParent has the pooler sent sig when pgarena ends, by kill -9 too
// (Linux's parent-death signal; sig is its stop signal, so pgpool ends its
// children as well). The signal follows the thread that started the
// pooler: startProcess keeps that thread until the pooler exits.
func dieWithParent(attr *syscall.SysProcAttr, sig syscall.Signal) { attr.Pdeathsig = sig }
