package session

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
)

// procsSeen records GOMAXPROCS at each interval an output receives.
type procsSeen struct {
	mu   sync.Mutex
	seen map[int]bool
}

func (p *procsSeen) Write(r Record) error {
	if r.Interval != nil {
		p.mu.Lock()
		p.seen[runtime.GOMAXPROCS(0)] = true
		p.mu.Unlock()
	}
	return nil
}

// TestJobsOwnGOMAXPROCS: the run sets GOMAXPROCS to its -j (at most the
// clients), records that, says why it used fewer than asked, and gives
// the process its value back at the end.
func TestJobsOwnGOMAXPROCS(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 cores")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notes []string
	spec := Spec{
		Groups:   []Group{{Workload: tpcbWorkload(t, tpcb.ScriptSelectOnly), Clients: 2, QueryMode: "prepared"}},
		Duration: time.Second, Tick: 250 * time.Millisecond, Seed: 1, Init: true, LoadWorkers: 1,
		Jobs: 3,
		Hooks: Hooks{Notef: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			notes = append(notes, fmt.Sprintf(format, args...))
		}},
	}
	seen := &procsSeen{seen: map[int]bool{}}
	res, err := Run(context.Background(), spec, provider(t), st, seen)
	if err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS %d after the run, want 1 as before it", got)
	}
	if len(seen.seen) != 1 || !seen.seen[2] {
		t.Errorf("GOMAXPROCS during the run %v, want 2 (-j 3, 2 clients)", seen.seen)
	}
	if res.Summary.Threads != 2 {
		t.Errorf("summary says %d threads, want 2", res.Summary.Threads)
	}
	run, err := st.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Spec.Threads != 2 {
		t.Errorf("run spec records %d threads, want 2", run.Spec.Threads)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(notes, "\n"), "-j 3 is more than -c 2: using 2 threads") {
		t.Errorf("notes %q: want the -j clamp said", notes)
	}
}
