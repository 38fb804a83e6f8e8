package session

import (
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/workload"
)

// nameStatements gives the per-statement latencies of the summary (-r)
// their commands' text, from the workloads that list them
// (workload.StatementLister). The summary's types are the groups' types
// in group order, as the Recorder numbers them.
func nameStatements(sum *metrics.Summary, groups []Group) {
	base := 0
	for _, g := range groups {
		n := len(g.Workload.TxTypes())
		lister, ok := g.Workload.(workload.StatementLister)
		for tx := 0; ok && tx < n && base+tx < len(sum.Tx); tx++ {
			st := sum.Tx[base+tx].Statements
			cmds := lister.Statements(workload.TxType(tx))
			for i := range st {
				if i < len(cmds) {
					st[i].Command = cmds[i]
				}
			}
		}
		base += n
	}
}
