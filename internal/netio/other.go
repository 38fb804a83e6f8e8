//go:build !linux

package netio

import (
	"net"
	"time"
)

// Wrap returns nc: blocking I/O is implemented on Linux only.
func Wrap(nc net.Conn) net.Conn { return nc }

// WrapRaw returns nc: raw I/O is implemented on Linux only.
func WrapRaw(nc net.Conn) net.Conn { return nc }

func wrapRaw(nc net.Conn, _ *Hold) net.Conn { return nc }

// processCPU is unknown here: Procs leaves GOMAXPROCS alone.
func processCPU() time.Duration { return -1 }
