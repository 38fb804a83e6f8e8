package cli

import (
	"strconv"

	"github.com/pgarena/pgarena/internal/workload"
)

// operationCount maps a workload's total operation count
// (workload.OperationCounter: ycsb --operation-count, YCSB's
// operationcount) to -t: the clients share it evenly, so exactly that many
// transactions run (each client's failed ones count against its share, as
// with -t).
func (f *runFlags) operationCount(w workload.Workload) error {
	oc, ok := w.(workload.OperationCounter)
	if !ok || oc.OperationCount() <= 0 {
		return nil
	}
	n := oc.OperationCount()
	if f.Time != nil || f.Transactions > 0 {
		return usagef("give either --operation-count or -T/--time or -t/--transactions, not two of them")
	}
	clients, err := strconv.Atoi(f.Clients)
	if err != nil || clients < 1 {
		return usagef("--operation-count needs one client count (-c N), not a sweep (-c %s)", f.Clients)
	}
	if n%clients != 0 {
		return usagef("--operation-count %d cannot be shared evenly by %d clients (pgarena runs -t transactions per client): give a multiple of %d", n, clients, clients)
	}
	f.transactions = n / clients
	return nil
}
