package netio

import (
	"runtime"
	"sync"
	"time"
)

// Procs keeps GOMAXPROCS as low as the process's CPU use allows, between 1
// and a maximum (the run's -j), while clients run.
//
// Benchmark clients spend most of their time waiting for the server. With
// more Ps than the busy goroutines need, each goroutine the netpoller
// readies wakes an idle P's thread, which spins looking for work and goes
// back to sleep: on a small machine shared with the server, that churn
// costs more client CPU than the clients' own work (see
// docs/benchmarks.md). So clients start on one P, the Ps double whenever
// they were more than 75% busy over a period (250 ms), up to the maximum,
// and one is given back when the others would have been less than half
// busy.
type Procs struct {
	max  int
	cpu  func() time.Duration // process CPU time so far; negative: unknown
	now  func() time.Time
	set  func(n int) int // runtime.GOMAXPROCS
	tick <-chan time.Time

	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	ticker *time.Ticker
	prev   int
}

// procsPeriod is how often Procs looks at the CPU used.
const procsPeriod = 250 * time.Millisecond

// AdaptProcs starts adapting GOMAXPROCS between 1 and max; max < 1 means
// the current GOMAXPROCS. Stop ends it and restores the value GOMAXPROCS
// had. Where the process's CPU time is not known, and with a maximum of 1,
// nothing changes.
func AdaptProcs(max int) *Procs {
	if max < 1 {
		max = runtime.GOMAXPROCS(0)
	}
	p := &Procs{max: max, cpu: processCPU, now: time.Now, set: runtime.GOMAXPROCS}
	if max > 1 && p.cpu() >= 0 {
		p.ticker = time.NewTicker(procsPeriod)
		p.tick = p.ticker.C
	}
	p.start()
	return p
}

func (p *Procs) start() {
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	if p.tick == nil {
		close(p.done)
		return
	}
	p.prev = p.set(1)
	go p.loop()
}

func (p *Procs) loop() {
	defer close(p.done)
	cur := 1
	lastCPU, lastWall := p.cpu(), p.now()
	for {
		select {
		case <-p.stop:
			return
		case <-p.tick:
		}
		cpu, wall := p.cpu(), p.now()
		if d := wall.Sub(lastWall); d > 0 {
			used := float64(cpu-lastCPU) / float64(d) // cores
			if n := nextProcs(cur, p.max, used); n != cur {
				cur = n
				p.set(cur)
			}
		}
		lastCPU, lastWall = cpu, wall
	}
}

// nextProcs is the number of Ps after a period in which the process kept
// used cores busy with cur Ps.
func nextProcs(cur, max int, used float64) int {
	switch {
	case used > 0.75*float64(cur) && cur < max:
		return min(max, 2*cur)
	case cur > 1 && used < 0.5*float64(cur-1):
		return cur - 1
	}
	return cur
}

// Stop ends the adaptation and restores GOMAXPROCS. Safe to call more than
// once, and on a nil *Procs (which does nothing).
func (p *Procs) Stop() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		close(p.stop)
		<-p.done
		if p.ticker != nil {
			p.ticker.Stop()
		}
		if p.prev > 0 {
			p.set(p.prev)
		}
	})
}

// RunProcs owns GOMAXPROCS for a run: it sets the run's threads once,
// lets a step adapt the Ps below them while its clients run (Adapt, Fix),
// and gives the process its own value back at the end (Restore). Nothing
// else sets GOMAXPROCS meanwhile; the rest of the run reads Threads.
type RunProcs struct {
	threads, prev int
	adapting      *Procs
}

// SetupProcs gives a run's setup (parsing, connecting, describing: one
// goroutine's work) one P and returns the value GOMAXPROCS had, for the
// caller to set back or to raise it to the run's threads once they are
// known (SetRunProcs keeps the current value for threads < 1). The binary
// already starts on one P (internal/startprocs): a P the runtime has used
// keeps memory in its caches that giving it up later does not return
// (~0.5 MB of a -j 1 run's peak RSS).
func SetupProcs() (prev int) { return runtime.GOMAXPROCS(1) }

// SetRunProcs sets GOMAXPROCS to threads for a run; threads < 1 keeps
// the current value.
func SetRunProcs(threads int) *RunProcs {
	p := &RunProcs{threads: runtime.GOMAXPROCS(0)}
	if threads > 0 {
		p.prev, p.threads = runtime.GOMAXPROCS(threads), threads
	}
	return p
}

// Threads is the run's GOMAXPROCS: what adapting starts from and returns to.
func (p *RunProcs) Threads() int { return p.threads }

// Adapt adapts GOMAXPROCS between 1 and Threads (see AdaptProcs) until Fix.
func (p *RunProcs) Adapt() {
	p.Fix()
	p.adapting = AdaptProcs(p.threads)
}

// Fix ends adapting: GOMAXPROCS is Threads again.
func (p *RunProcs) Fix() {
	p.adapting.Stop()
	p.adapting = nil
}

// Restore ends adapting and gives GOMAXPROCS the value it had before
// SetRunProcs.
func (p *RunProcs) Restore() {
	p.Fix()
	if p.prev > 0 {
		runtime.GOMAXPROCS(p.prev)
	}
}
