package cli

import "golang.org/x/sys/unix"

// fdsPerProcess is the headroom of open files pgarena needs besides one per
// client: the results files, the loader, the sampler, the runtime.
const fdsPerProcess = 64

// raiseOpenFiles raises the soft limit on open files to the hard limit and
// returns the new soft limit.
func raiseOpenFiles() (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = lim.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err == nil {
			lim = want
		}
	}
	return lim.Cur, nil
}

// checkOpenFiles raises the open-files limit and checks that it fits the
// clients.
func checkOpenFiles(clients int) error {
	limit, err := raiseOpenFiles()
	if err == nil && uint64(clients)+fdsPerProcess > limit {
		return usagef("%d clients need about %d open files but the limit is %d: raise it (ulimit -n) or use fewer clients",
			clients, clients+fdsPerProcess, limit)
	}
	return nil
}
