package driver

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// connectGC collects the garbage of the initial connects itself, between
// connects, in place of the runtime's collector at any moment.
//
// Marking a goroutine's stack reads, for each frame, its function's tables
// in the binary's .gopclntab (findfunc, the stack maps' pcdata). A
// collection while connects are under way, or while just-launched clients
// wait deep in their first statement, reads them for pgconn's connect path
// and the client's read path: spread over the binary, on a kernel that maps
// the 64 KB around each read fault, ~1 MB of file-backed RSS at 1,000
// clients that a run collecting only between connects never maps. So the
// runtime's collector is off while clients connect (debug.SetGCPercent(-1);
// a GOMEMLIMIT still applies), and a connect that brings what was allocated
// since the last collection to the growth GOGC allows (at least 4 MB, the
// runtime's smallest goal) collects with runtime.GC once the connects in
// flight are done and before others start (their goroutines then wait in
// a lock, two frames deep): the heap grows as under GOGC. The last
// collection runs after the last connect when past half that growth, so
// the clients start with at least half a cycle before the runtime's next.
type connectGC struct {
	gcPercent int           // GOGC's value, restored by done; <0: off, connectGC does nothing
	mu        sync.RWMutex  // read-held by each connect, held by a collection
	next      atomic.Uint64 // heap bytes allocated at which the next collection runs
	growth    uint64        // the growth allowed after the last collection (mu)
	lastAlloc uint64        // heap bytes allocated at the last collection (mu)
}

// heapAllocs and heapLive are runtime/metrics' names: bytes allocated on
// the heap since the start, and the live heap at the last collection.
const (
	heapAllocs = "/gc/heap/allocs:bytes"
	heapLive   = "/gc/heap/live:bytes"
)

// minGrowth is the runtime's smallest heap goal (4 MB at GOGC=100).
const minGrowth = 4 << 20

func newConnectGC() *connectGC {
	g := &connectGC{gcPercent: debug.SetGCPercent(-1)}
	if g.gcPercent < 0 {
		return g // GOGC=off: nothing collects
	}
	g.plan()
	return g
}

// plan sets the next collection's threshold from the last collection's live
// heap, as the runtime's goal under GOGC.
func (g *connectGC) plan() {
	s := []metrics.Sample{{Name: heapAllocs}, {Name: heapLive}}
	metrics.Read(s)
	g.lastAlloc = s[0].Value.Uint64()
	g.growth = max(s[1].Value.Uint64()*uint64(g.gcPercent)/100, minGrowth*uint64(g.gcPercent)/100)
	g.next.Store(g.lastAlloc + g.growth)
}

// allocated returns the heap bytes allocated since the start.
func allocated() uint64 {
	s := []metrics.Sample{{Name: heapAllocs}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// begin starts a connect: no collection runs until its end.
func (g *connectGC) begin() {
	if g.gcPercent >= 0 {
		g.mu.RLock()
	}
}

// end ends a connect, then collects when the heap has grown by GOGC's
// share since the last collection. (Not one call around the connect: its
// frames would be under pgconn's connect path, which reaches 8 KB.)
func (g *connectGC) end() {
	if g.gcPercent < 0 {
		return
	}
	g.mu.RUnlock()
	if allocated() < g.next.Load() {
		return
	}
	g.mu.Lock()
	if allocated() >= g.next.Load() { // not collected by another connect meanwhile
		runtime.GC()
		g.plan()
	}
	g.mu.Unlock()
}

// done ends the connects: a last collection when past half the growth, and
// GOGC back.
func (g *connectGC) done() {
	if g.gcPercent < 0 {
		return
	}
	if allocated()-g.lastAlloc >= g.growth/2 {
		runtime.GC()
	}
	debug.SetGCPercent(g.gcPercent)
}
