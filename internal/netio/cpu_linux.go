//go:build linux

package netio

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU time (user and system) of the whole process so far,
// or -1 if unknown.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
