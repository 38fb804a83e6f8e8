package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

const twoTargets = `name: t
repeats: 2
defaults:
  time: 10s
  flags: {progress: 0}
targets:
  - name: a
    dsn: postgres://a/db
  - name: b
    dsn: postgres://b/db
    flags: {time: 20s}
workloads:
  - name: tpcb
    flags: {scale: 1}
matrix:
  clients: [1, 8]
  pg-set: [[a=1, b=2]]
`

func TestCellsExpandInOrderWithStableIDs(t *testing.T) {
	p, err := Parse("t.yaml", []byte(twoTargets))
	if err != nil {
		t.Fatal(err)
	}
	cells := p.Cells()
	if len(cells) != 2*2*2 {
		t.Fatalf("%d cells, want 8", len(cells))
	}
	want := []string{"a/tpcb/clients=1/pg-set=a=1,b=2", "a/tpcb/clients=8/pg-set=a=1,b=2", "b/tpcb/clients=1/pg-set=a=1,b=2"}
	for i, w := range want {
		if cells[i].Name != w || cells[i].Repeat != 1 || cells[i].Index != i+1 {
			t.Errorf("cell %d: %s repeat %d index %d, want %s", i, cells[i].Name, cells[i].Repeat, cells[i].Index, w)
		}
	}
	if cells[4].Repeat != 2 || cells[4].ID != cells[0].ID {
		t.Errorf("repeats go outermost with the same ids: %+v", cells[4])
	}
	args := strings.Join(cells[2].Args(true), " ")
	if args != "tpcb --dsn=postgres://b/db --time=20s --progress=0 --scale=1 --clients=1 --pg-set=a=1 --pg-set=b=2 --init" {
		t.Errorf("args: %s", args)
	}
	// Reordering the file keeps ids; changing a value changes them.
	re := strings.Replace(twoTargets, "  clients: [1, 8]\n  pg-set: [[a=1, b=2]]\n", "  pg-set: [[a=1, b=2]]\n  clients: [1, 8]\n", 1)
	p2, err := Parse("t.yaml", []byte(re))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, c := range p2.Cells() {
		ids[c.ID] = true
	}
	for _, c := range cells {
		if !ids[c.ID] {
			t.Errorf("cell %s changed id when the axes were reordered", c.Name)
		}
	}
	p3, _ := Parse("t.yaml", []byte(strings.Replace(twoTargets, "scale: 1", "scale: 2", 1)))
	if p3.Cells()[0].ID == cells[0].ID {
		t.Error("a changed parameter kept the cell's id")
	}
	p.Order = OrderShuffled
	shuffled := p.Cells()
	if shuffled[0].Key() == cells[0].Key() && shuffled[1].Key() == cells[1].Key() && shuffled[2].Key() == cells[2].Key() {
		t.Error("shuffled order is the written order")
	}
}

func TestParseErrorsNameFileLineAndKey(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"repeats: 2", "repeets: 2", `t.yaml:2: unknown key "repeets" in the plan`},
		{"repeats: 2", "repeats: two", `t.yaml:2: repeats: "two" is not a whole number`},
		{"    dsn: postgres://a/db", "    dsm: postgres://a/db", `t.yaml:8: unknown key "dsm" in a target`},
		{"  - name: b\n", "  - name: a\n", `t.yaml:9: target a is named twice`},
		{"  time: 10s", "  time: [1, 2]", `t.yaml:4: time: expected a single value`},
		{"  clients: [1, 8]", "  target: [c]", `t.yaml:16: matrix target: no target named "c"`},
		{"name: t", "name: t\norder: random", `t.yaml:2: order: "random" is not as-written or shuffled`},
		{"  flags: {progress: 0}", "  flags: {progress: 0\n", "t.yaml:"},
	} {
		_, err := Parse("t.yaml", []byte(strings.Replace(twoTargets, tc.from, tc.to, 1)))
		var pe *Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q -> %q: error %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
}

func TestParseSLO(t *testing.T) {
	s, err := ParseSLO("p99<50ms, errors<1%")
	if err != nil || len(s.Latency) != 1 || s.Latency[0].Max != 50*time.Millisecond || s.MaxErrors != 0.01 {
		t.Fatalf("%+v %v", s, err)
	}
	for _, bad := range []string{"p98<5ms", "p99>5ms", "errors<1", "p99<fast", ""} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("ParseSLO(%q) accepted", bad)
		}
	}
	sum := metrics.Summary{Status: metrics.StatusComplete, Transactions: 1000, Failed: 5}
	sum.Latency.P99 = 49
	if ok, why := s.Holds(&sum); !ok {
		t.Errorf("holds: %s", why)
	}
	sum.Failed = 20
	if ok, _ := s.Holds(&sum); ok {
		t.Error("2% errors held an errors<1% SLO")
	}
	sum.Failed, sum.Unstarted = 0, 100
	if ok, _ := s.Holds(&sum); ok {
		t.Error("a step that left 9% of its arrivals unstarted held")
	}
}

// TestSearchBrackets runs the search against a model of a server with a
// known capacity (no database: each step is a recorded run whose p99 is
// low below the capacity and high above it).
func TestSearchBrackets(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const capacity = 730.0
	slo, _ := ParseSLO("p99<50ms")
	s := &Search{SLO: slo, Start: 100, Factor: 2, Min: 1, Precision: 0.02, MaxSteps: 20, Store: st,
		Step: func(ctx context.Context, rate float64) (string, error) {
			w, err := st.Create(store.RunSpec{Workload: "model"})
			if err != nil {
				return "", err
			}
			defer w.Close()
			sum := metrics.Summary{Status: metrics.StatusComplete, Transactions: 1000, TPS: min(rate, capacity)}
			sum.Latency.P99 = 10
			if rate > capacity {
				sum.Latency.P99 = 500
			}
			return w.ID(), w.Finish(sum, nil)
		}}
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Rate > capacity || (capacity-res.Rate)/capacity > 0.02 || res.Above == nil || res.Above.Rate <= capacity {
		t.Errorf("found %g (above %+v), capacity %g; probes %+v", res.Rate, res.Above, capacity, res.Probes)
	}
	if math.Abs(res.Below.Rate-res.Rate) > 0 || res.Below.RunID == "" {
		t.Errorf("below %+v", res.Below)
	}
	// A first step that breaks makes the search go down.
	s.Start = 5000
	if res, err = s.Run(context.Background()); err != nil || res.Rate > capacity || res.Rate < capacity*0.98 {
		t.Errorf("from above: %g %v %+v", res.Rate, err, res.Probes)
	}
}

// fakeExec checks nothing and records a run per cell: the runner's
// bookkeeping without a database.
type fakeExec struct {
	st   *store.Store
	ran  []string
	fail map[string]bool // cell names whose run fails before recording
}

func (f *fakeExec) Check(args []string) (map[string]bool, error) {
	return map[string]bool{"scale": true}, nil
}

func (f *fakeExec) Run(ctx context.Context, args []string, tag store.PlanTag) (string, error) {
	f.ran = append(f.ran, tag.CellName+fmt.Sprint(strings.Contains(strings.Join(args, " "), "--init")))
	if f.fail[tag.CellName] {
		return "", errors.New("refused")
	}
	w, err := f.st.Create(store.RunSpec{Workload: "tpcb", PlanTag: tag})
	if err != nil {
		return "", err
	}
	defer w.Close()
	now := time.Now()
	return w.ID(), w.Finish(metrics.Summary{Status: metrics.StatusComplete, Start: now, End: now}, nil)
}

func (f *fakeExec) Maintain(ctx context.Context, targetArgs, what []string) error { return nil }

func TestRunnerRecordsFailuresAndInitsOnce(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("t.yaml", []byte(strings.Replace(twoTargets, "repeats: 2", "repeats: 1\ndefaults:\n  init: once", 1)))
	if err == nil {
		t.Fatal("defaults given twice was accepted")
	}
	p, _ = Parse("t.yaml", []byte(strings.Replace(twoTargets, "  time: 10s", "  time: 10s\n  init: once", 1)))
	p.Repeats = 1
	ex := &fakeExec{st: st, fail: map[string]bool{"b/tpcb/clients=1/pg-set=a=1,b=2": true}}
	r := &Runner{Plan: p, Store: st, Exec: ex}
	out, err := r.Run(context.Background())
	if err != nil || out.Ran != 4 || out.Failed != 1 {
		t.Fatalf("%+v %v", out, err)
	}
	want := "a/tpcb/clients=1/pg-set=a=1,b=2true a/tpcb/clients=8/pg-set=a=1,b=2false b/tpcb/clients=1/pg-set=a=1,b=2true b/tpcb/clients=8/pg-set=a=1,b=2true"
	if got := strings.Join(ex.ran, " "); got != want {
		t.Errorf("ran\n%s\nwant\n%s", got, want)
	}
	s, _ := State(p, st)
	if c := s.Counts(); c[Done] != 3 || c[Failed] != 1 {
		t.Errorf("counts %v", c)
	}
	ex.ran, ex.fail = nil, nil
	if out, _ = r.Run(context.Background()); out.Ran != 0 || out.Skipped != 4 {
		t.Errorf("second run without --retry-failed: %+v", out)
	}
	r.RetryFailed = true
	if out, _ = r.Run(context.Background()); out.Ran != 1 || len(ex.ran) != 1 {
		t.Errorf("retry: %+v %v", out, ex.ran)
	}
	if s, _ = State(p, st); s.Counts()[Done] != 4 {
		t.Errorf("after retry: %v", s.Counts())
	}
}
