package script

import "sync"

// Chooser picks the script of each transaction of a run with several
// weighted scripts as pgbench does: pgbench keeps one random state per -j
// thread for the choice (not per client), seeded from --random-seed after
// the clients' states and the hash functions' default seed, each thread
// in order taking three seeds (choice, throttling, log sampling). Clients
// are dealt to threads in contiguous blocks (thread i takes ceil(clients
// left / threads left)). With one client per thread, each client's
// sequence of scripts is pgbench's exactly; with several, the thread's
// sequence is pgbench's and its clients take from it in the order they
// start transactions, as in pgbench (so only the totals are reproducible).
type Chooser struct {
	prog     *Program
	threads  []*threadChoice
	byThread []int // client id -> thread
}

// threadChoice is one thread's random state for the choice, shared by its
// clients (goroutines here, hence the lock).
type threadChoice struct {
	mu  sync.Mutex
	rng prng
}

// NewChooser makes the choosers of a run of clients clients on threads
// threads (pgbench's -j, at least 1, at most clients) with --random-seed
// seed.
func (p *Program) NewChooser(seed uint64, clients, threads int) *Chooser {
	clients = max(clients, 1)
	threads = max(1, min(threads, clients))
	c := &Chooser{prog: p, threads: make([]*threadChoice, threads), byThread: make([]int, clients)}
	var base prng
	base.seed(seed)
	for i := 0; i < clients; i++ {
		base.uint64() // the clients' function states
	}
	if !p.defines("default_seed") {
		base.uint64() // the hash functions' default seed
	}
	dealt := 0
	for t := 0; t < threads; t++ {
		tc := &threadChoice{}
		tc.rng.seed(base.uint64())
		base.uint64() // throttling
		base.uint64() // log sampling
		c.threads[t] = tc
		n := (clients - dealt + threads - t - 1) / (threads - t)
		for k := dealt; k < dealt+n; k++ {
			c.byThread[k] = t
		}
		dealt += n
	}
	return c
}

// Next picks the script of client id's next transaction.
func (c *Chooser) Next(id int) int {
	if len(c.prog.scripts) == 1 {
		return 0 // pgbench draws nothing for a single script
	}
	t := c.threads[c.byThread[id%len(c.byThread)]]
	t.mu.Lock()
	u := t.rng.random(0, c.prog.total-1)
	t.mu.Unlock()
	return c.prog.Choose(u)
}

// defines reports whether -D gave the variable name.
func (p *Program) defines(name string) bool {
	slot, ok := p.syms.idx[name]
	if !ok {
		return false
	}
	for _, d := range p.defaults {
		if d.slot == slot && d.text != nil {
			return true
		}
	}
	return false
}
