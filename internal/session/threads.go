package session

import "runtime"

// RunThreads is the GOMAXPROCS Run gives spec's clients (0: the current
// value), without Run's notes.
func RunThreads(spec Spec) int {
	return runThreads(spec.Jobs, spec.totalClients(), func(string, ...any) {})
}

// runThreads is the run's -j as it runs: at most the clients, and the
// cores (0: GOMAXPROCS as it is); notef says when it is less than asked.
func runThreads(jobs, clients int, notef func(string, ...any)) int {
	threads := jobs
	if threads > clients {
		notef("-j %d is more than -c %d: using %d threads", threads, clients, clients)
		threads = clients
	}
	if cores := runtime.NumCPU(); threads > cores {
		notef("-j %d: clients run as goroutines on at most %d OS threads (the cores of this machine)", threads, cores)
		threads = cores // what is recorded and printed is what ran
	}
	return threads
}
