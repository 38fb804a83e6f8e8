package serve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// replCache keeps the runs list's replication cell of each run directory,
// read again when its summary.json changes.
type replCache struct {
	mu sync.Mutex
	m  map[string]replEntry
}

type replEntry struct {
	mod  time.Time
	cell string
}

func newReplCache() *replCache { return &replCache{m: map[string]replEntry{}} }

// get is the replication cell of the run in dir.
func (c *replCache) get(dir string) string {
	path := filepath.Join(dir, store.SummaryFile)
	mod := modTime(path)
	c.mu.Lock()
	e, ok := c.m[dir]
	c.mu.Unlock()
	if ok && e.mod.Equal(mod) {
		return e.cell
	}
	e = replEntry{mod: mod}
	var sum struct {
		Replication *metrics.Replication `json:"replication"`
		Failover    *metrics.Failover    `json:"failover"`
	}
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &sum) == nil {
		e.cell = replicationCell(sum.Replication, sum.Failover)
	}
	c.mu.Lock()
	if len(c.m) >= 100_000 { // runs deleted since: start over
		c.m = map[string]replEntry{}
	}
	c.m[dir] = e
	c.mu.Unlock()
	return e.cell
}

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
