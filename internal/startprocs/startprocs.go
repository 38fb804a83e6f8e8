// Package startprocs gives the process one P (GOMAXPROCS 1) from its first
// inits on, and keeps the value the runtime chose for whoever sets it back.
//
// A P the runtime destroys (GOMAXPROCS lowered) hands every span its cache
// holds to the central lists, and each list's first span costs a 4 KB
// block (runtime spanSet): when package inits happened to run on the
// second P, lowering GOMAXPROCS to one at the start of `run` made ~350 KB
// resident. Lowered here, before the inits that allocate, the second P
// holds next to nothing. cli.Main sets the value back for every command
// but a run, whose setup keeps one P (netio.SetupProcs).
//
// Its only import is runtime, so it is among the first packages
// initialised; cmd/pgarena imports it, tests do not.
package startprocs

import "runtime"

// atStart is GOMAXPROCS as the process started with it, set once by init.
var atStart int

func init() { atStart = runtime.GOMAXPROCS(1) }

// AtStart is the GOMAXPROCS the process started with, before this
// package's init gave it one P.
func AtStart() int { return atStart }
