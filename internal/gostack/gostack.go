// Package gostack grows a goroutine's stack once, when it starts, to the
// size its work will need.
//
// A goroutine starts on a 2 KB stack that the runtime doubles whenever a
// call needs more. Each growth copies the stack and reads, for every frame
// on it, its function's entry and tables in the binary's .gopclntab. The
// frames of a goroutine deep in pgx, net or encoding/json belong to
// functions spread over the binary, and on a kernel that maps the 64 KB
// around each read fault (fault-around) those reads map pclntab pages that
// nothing else reads: 640 KB of a one-client run's RSS. Grown at its start,
// a goroutine's stack holds one or two frames to walk.
//
// The frames that force a growth are never written (their arrays are
// zeroed only on a branch never taken), so only the stack pages the
// goroutine later uses become resident: a 64 KB stack that holds 20 KB of
// frames costs 20 KB.
//
// The package's init grows the main goroutine's stack to 64 KB: it has no
// imports, so it runs among the first inits, before those of internal/godebug
// and of dependencies that compile regular expressions, which grew the
// stack twice with ten frames on it (`pgarena version`: 700 KB of RSS).
package gostack

func init() { At64K() }

// never is false; the compiler cannot know it, so the frames stay.
var never bool

// At4K grows the calling goroutine's stack to 4 KB.
//
//go:noinline
func At4K() {
	if never {
		var frame [2 << 10]byte
		use(frame[:])
	}
}

// At8K grows the calling goroutine's stack to 8 KB.
//
//go:noinline
func At8K() {
	if never {
		var frame [6 << 10]byte
		use(frame[:])
	}
}

// At64K grows the calling goroutine's stack to 64 KB.
//
//go:noinline
func At64K() {
	if never {
		var frame [40 << 10]byte
		use(frame[:])
	}
}

//go:noinline
func use([]byte) {}
