package serve

import (
	"fmt"
	"strings"

	"github.com/pgarena/pgarena/internal/metrics"
)

// Repl is the list's replication and failover cell of the run.
func (r listRow) Repl() string { return replicationCell(r.Replication, r.Failover) }

// replicationCell says in a few words how a run's replicas kept up and
// what its failover cost; "" when it has neither.
func replicationCell(r *metrics.Replication, f *metrics.Failover) string {
	var parts []string
	if r != nil {
		if r.CaughtUp {
			parts = append(parts, fmt.Sprintf("caught up in %.2f s, sustainable %.1f tps", r.CatchUpS, r.SustainableTPS))
		} else {
			parts = append(parts, fmt.Sprintf("NOT caught up (> %.2f s), sustainable ≤ %.1f tps", r.CatchUpS, r.SustainableTPS))
		}
	}
	if f != nil {
		switch {
		case f.FaultAtS == 0:
			parts = append(parts, "failover not measured")
		default:
			parts = append(parts, fmt.Sprintf("failover: down %.3f s, %d of %d acknowledged lost", f.DowntimeS, f.AckedLost, f.LedgerAcked))
		}
	}
	return strings.Join(parts, "; ")
}
