// Package netio chooses how benchmark clients do network I/O on their
// connections, a measurable share of a client's CPU when it shares a small
// machine with the server (see docs/benchmarks.md):
//
//   - std: the standard library's net.Conn.
//   - raw (the default): the socket stays in Go's netpoller, but reads and
//     writes are raw system calls. The socket is non-blocking, so they never
//     sleep in the kernel and need none of the runtime's system call
//     bookkeeping, which otherwise wakes the runtime's monitor thread
//     (sysmon) on most calls when every client is waiting for the server.
//   - blocking: the socket in blocking mode, one OS thread per client
//     asleep in read(2). Fewest system calls, but each round trip puts a
//     thread to sleep and wakes it, which costs more than it saves on the
//     machines measured; kept for experiments.
//
// Only plain TCP and unix-socket connections are switched; a TLS connection
// (or anything else) is used as it is.
package netio

import (
	"context"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// Mode is how a connection does its I/O.
type Mode string

const (
	// Std is the standard library's net.Conn.
	Std Mode = "std"
	// Raw keeps the socket in Go's netpoller and reads and writes it with
	// raw system calls (WrapRaw).
	Raw Mode = "raw"
	// Blocking reads and writes with blocking system calls (Wrap).
	Blocking Mode = "blocking"
	// Default is the mode of benchmark clients unless told otherwise.
	Default = Raw
)

// ParseMode validates a --net-io value; "" is Default.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "":
		return Default, nil
	case Std, Raw, Blocking:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown network I/O mode %q (use raw, std or blocking)", s)
}

// Apply makes connections opened with cfg use mode m: for Raw and Blocking
// it installs an AfterNetConnect hook (after any already set) that wraps
// plain sockets with WrapRaw or Wrap. cfg is changed in place; Std leaves
// it as it is.
func Apply(cfg *pgconn.Config, m Mode) { ApplyHold(cfg, m, nil) }

// ApplyHold is Apply with the waits of h for Raw connections (nil: none;
// see Hold).
func ApplyHold(cfg *pgconn.Config, m Mode, h *Hold) {
	var wrap func(net.Conn) net.Conn
	switch m {
	case Blocking:
		wrap = Wrap
	case Raw:
		wrap = func(nc net.Conn) net.Conn { return wrapRaw(nc, h) }
	default:
		return
	}
	prev := cfg.AfterNetConnect
	cfg.AfterNetConnect = func(ctx context.Context, c *pgconn.Config, nc net.Conn) (net.Conn, error) {
		if prev != nil {
			var err error
			if nc, err = prev(ctx, c, nc); err != nil {
				return nc, err
			}
		}
		return wrap(nc), nil
	}
}
