package driver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
)

// txTimes records each client's transaction starts and ends.
type txTimes struct {
	mu         sync.Mutex
	start, end map[int][]time.Time
}

func (o *txTimes) ObserveTx(e TxEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start[e.Client] = append(o.start[e.Client], e.Start)
	o.end[e.Client] = append(o.end[e.Client], e.End)
}

// TestGroupAfter: a group with After starts its first transaction only
// once every client of the named group has finished (-t here), and a group
// after a group that does not exist is refused.
func TestGroupAfter(t *testing.T) {
	obs := &txTimes{start: map[int][]time.Time{}, end: map[int][]time.Time{}}
	w := &sleepWorkload{sleep: 20 * time.Millisecond}
	groups := []Group{
		{Name: "first", Workload: w, Dial: nilDialer, Clients: 2},
		{Name: "then", Workload: w, Dial: nilDialer, Clients: 1, After: "first"},
	}
	rec := metrics.NewRecorder(nil, time.Now())
	for i := range groups {
		groups[i].TxBase = rec.AddGroup(groups[i].Name, w.TxTypes())
	}
	cfg := Config{Transactions: 3, Tick: 50 * time.Millisecond, Observer: obs}
	if _, err := RunGroups(context.Background(), groups, cfg, rec); err != nil {
		t.Fatal(err)
	}
	if len(obs.start[2]) != 3 || len(obs.end[0]) != 3 || len(obs.end[1]) != 3 {
		t.Fatalf("transactions per client: %d, %d, %d; want 3 each", len(obs.end[0]), len(obs.end[1]), len(obs.start[2]))
	}
	last := obs.end[0][2]
	if e := obs.end[1][2]; e.After(last) {
		last = e
	}
	if first := obs.start[2][0]; first.Before(last) {
		t.Errorf("group then started at %v, before group first ended at %v", first, last)
	}
	groups[1].After = "nothing"
	if _, err := RunGroups(context.Background(), groups, cfg, metrics.NewRecorder(w.TxTypes(), time.Now())); err == nil {
		t.Error("a group after a group that does not exist runs")
	}
}
