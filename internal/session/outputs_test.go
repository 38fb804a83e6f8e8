package session

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
)

// lifecycle records the kinds of records an output sees and its Close.
type lifecycle struct {
	mu     sync.Mutex
	kinds  []string
	end    *RunEnd
	start  *RunStart
	closed int
}

func (l *lifecycle) Write(r Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case r.Start != nil:
		l.kinds, l.start = append(l.kinds, "start"), r.Start
	case r.Interval != nil:
		l.kinds = append(l.kinds, "interval")
	case r.Samples != nil:
		l.kinds = append(l.kinds, "samples")
	case r.Step != nil:
		l.kinds = append(l.kinds, "step")
	case r.End != nil:
		l.kinds, l.end = append(l.kinds, "end"), r.End
	}
	if l.closed > 0 {
		l.kinds = append(l.kinds, "write after close")
	}
	return nil
}

func (l *lifecycle) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed++
	return nil
}

// TestOutputLifecycle: an output sees the run's start first and its
// recorded end last, then is closed once; a run that ends before its
// outputs receive anything still closes them.
func TestOutputLifecycle(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{
		Groups:   []Group{{Workload: tpcbWorkload(t, tpcb.ScriptSelectOnly), Clients: 1, QueryMode: "prepared"}},
		Duration: time.Second, Tick: 200 * time.Millisecond, Seed: 1, Init: true, LoadWorkers: 2,
		SampleEvery: 300 * time.Millisecond,
	}
	l := &lifecycle{}
	res, err := Run(context.Background(), spec, provider(t), st, l)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.kinds) < 3 || l.kinds[0] != "start" || l.kinds[len(l.kinds)-1] != "end" || l.closed != 1 {
		t.Fatalf("records %v, closed %d times: want start first, end last, closed once", l.kinds, l.closed)
	}
	if !slices.Contains(l.kinds, "interval") || !slices.Contains(l.kinds, "samples") {
		t.Errorf("records %v: want intervals and samples", l.kinds)
	}
	if l.start.ID != res.RunID || l.start.Spec.Workload != "tpcb" || l.start.Server.Version == "" {
		t.Errorf("start %+v: want run %s, workload tpcb, the server's version", l.start, res.RunID)
	}
	if l.end.Summary.Transactions != res.Summary.Transactions || l.end.Summary.Status != res.Summary.Status {
		t.Errorf("end summary %d %s, the run's %d %s", l.end.Summary.Transactions, l.end.Summary.Status,
			res.Summary.Transactions, res.Summary.Status)
	}
	if len(res.OutputProblems) != 0 {
		t.Errorf("output problems %q", res.OutputProblems)
	}

	early := &lifecycle{}
	if _, err := Run(context.Background(), Spec{}, provider(t), st, early); err == nil {
		t.Fatal("a spec without groups ran")
	}
	if early.closed != 1 || len(early.kinds) != 0 {
		t.Errorf("an output of a run refused at once: records %v, closed %d times; want none, once", early.kinds, early.closed)
	}
}

// problemsContain reports whether a problem line contains s.
func problemsContain(ps []string, s string) bool {
	return slices.ContainsFunc(ps, func(p string) bool { return strings.Contains(p, s) })
}
