package cli

import "github.com/pgarena/pgarena/internal/workload"

// finisherLength gives a run of a workload.Finisher (tpch's power and
// throughput tests) without -T or -t the length of its clients' lists: the
// run ends when every client has run its list. -T or -t still bound it.
func finisherLength(w workload.Workload, f *runFlags) {
	if fin, ok := w.(workload.Finisher); ok && f.duration == 0 && f.transactions == 0 {
		f.transactions = fin.Transactions()
	}
}

// grouper returns w's client groups (workload.Grouper), or false when it
// runs as one group of -c clients: not a Grouper, or one whose parameters
// make no groups (tpch's looped streams).
func grouper(w workload.Workload) (workload.Grouper, bool) {
	gr, ok := w.(workload.Grouper)
	if !ok || len(gr.Groups()) == 0 {
		return nil, false
	}
	return gr, true
}
