package session

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// provider is the DSN provider of a fresh test database.
func provider(t *testing.T) target.Provider {
	t.Helper()
	cfg, err := target.ParseDSN(pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &target.DSN{Config: cfg}
}

func tpcbWorkload(t *testing.T, script string) *tpcb.Workload {
	t.Helper()
	w := tpcb.New()
	if err := w.Flags().Set("builtin", script); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

// intervals collects the intervals an output receives.
type intervals struct {
	mu  sync.Mutex
	ivs []metrics.Interval
}

func (c *intervals) Write(r Record) error {
	if r.Interval != nil {
		c.mu.Lock()
		c.ivs = append(c.ivs, *r.Interval)
		c.mu.Unlock()
	}
	return nil
}

// TestTwoGroups runs tpcb select-only on 2 clients beside tpcb-like on 2
// clients in one run, through the session package alone, and gets a
// summary per group and in total.
func TestTwoGroups(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reads, writes := tpcbWorkload(t, tpcb.ScriptSelectOnly), tpcbWorkload(t, tpcb.ScriptTPCBLike)
	spec := Spec{
		Groups: []Group{
			{Name: "reads", Workload: reads, Clients: 2, QueryMode: "prepared"},
			{Name: "writes", Workload: writes, Clients: 2, QueryMode: "simple"},
		},
		Duration: 2 * time.Second, Tick: 250 * time.Millisecond, Seed: 1, Init: true, LoadWorkers: 2, Check: true,
	}
	col := &intervals{}
	res, err := Run(ctx, spec, provider(t), st, col)
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	if sum.Status != metrics.StatusComplete || len(sum.Groups) != 2 {
		t.Fatalf("status %s, %d groups: want complete and 2", sum.Status, len(sum.Groups))
	}
	var total int64
	for _, g := range sum.Groups {
		if g.Transactions == 0 || g.Failed != 0 || g.Clients != 2 || g.Workload != "tpcb" {
			t.Errorf("group %+v: want transactions, no failures, 2 clients of tpcb", g)
		}
		total += g.Transactions
	}
	if total != sum.Transactions {
		t.Errorf("groups add up to %d transactions, total says %d", total, sum.Transactions)
	}
	if sum.Groups[0].QueryMode != "prepared" || sum.Groups[1].QueryMode != "simple" {
		t.Errorf("query modes %s, %s", sum.Groups[0].QueryMode, sum.Groups[1].QueryMode)
	}
	names := map[string]bool{}
	for _, tx := range sum.Tx {
		names[tx.Name] = tx.Transactions > 0
	}
	if !names["reads/select-only"] || !names["writes/tpcb-like"] {
		t.Errorf("per-type rows %v: want reads/select-only and writes/tpcb-like with transactions", names)
	}
	if len(res.Checks) != 1 || res.Checks[0].Err != nil {
		t.Errorf("checks %+v: want one passing tpcb check", res.Checks)
	}
	// The run on disk says the same.
	run, err := st.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary.Transactions != sum.Transactions || len(run.Summary.Groups) != 2 {
		t.Errorf("stored summary: %d transactions, %d groups", run.Summary.Transactions, len(run.Summary.Groups))
	}
	if len(col.ivs) < 7 {
		t.Errorf("the output saw %d intervals of a 2 s run at 250 ms", len(col.ivs))
	}
}

// blocking is an output that blocks for a while on its first record.
type blocking struct {
	once  sync.Once
	sleep time.Duration
}

func (b *blocking) Write(Record) error {
	b.once.Do(func() { time.Sleep(b.sleep) })
	return nil
}

// TestSlowOutputDoesNotHoldTheClock: an output that blocks for 5 s does
// not change the tick cadence; its records still arrive, late.
func TestSlowOutputDoesNotHoldTheClock(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	var mu sync.Mutex
	spec := Spec{
		Groups:   []Group{{Workload: tpcbWorkload(t, tpcb.ScriptSelectOnly), Clients: 2, QueryMode: "prepared"}},
		Duration: 4 * time.Second, Tick: 100 * time.Millisecond, Seed: 1, Init: true, LoadWorkers: 2,
		Hooks: Hooks{Notef: func(f string, a ...any) { mu.Lock(); notes = append(notes, f); mu.Unlock() }},
	}
	col, slow := &intervals{}, &blocking{sleep: 5 * time.Second}
	t0 := time.Now()
	res, err := Run(ctx, spec, provider(t), st, slow, col)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(t0); took < 5*time.Second {
		t.Errorf("Run returned after %s: it should wait for the slow output to drain", took)
	}
	// Interval boundaries come from the driver's absolute clock: the
	// blocked output cannot stretch them. 40 measured intervals of 100 ms,
	// each one tick long: well past the backlog of 30 records that is
	// noted (at 3 s, 29 intervals would not reach it); then the drain's,
	// as many as a loaded host takes to end the clients' last
	// transactions. A tick held up by the output would end its interval
	// when the 5 s block ends; a loaded host serves a tick late by far less
	// than a second (the next interval is then as much shorter), so an
	// interval may last up to 1 s.
	measured := 0
	for _, iv := range col.ivs {
		if d := iv.Duration(); d > slow.sleep/5 {
			t.Errorf("interval %d lasted %s: the tick was held up", iv.Seq, d)
		}
		if !iv.Drain {
			measured++
		}
	}
	if measured < 39 || measured > 41 {
		t.Fatalf("%d measured intervals in a 4 s run at 100 ms ticks", measured)
	}
	if got := res.Summary.DurationS; got < 3.9 || got > 4.2 {
		t.Errorf("measured %.2f s of a 4 s run", got)
	}
	mu.Lock()
	defer mu.Unlock()
	slowNoted := false
	for _, n := range notes {
		if n == "output %s is %d records behind: it is slower than the run (the load is not held up)" {
			slowNoted = true
		}
	}
	if !slowNoted {
		t.Errorf("the slow output was not reported: notes %q", notes)
	}
	if !problemsContain(res.OutputProblems, "records behind") {
		t.Errorf("the slow output is not among the problems reported at the end: %q", res.OutputProblems)
	}
}

// TestDiskFullEndsTheRun: a results disk that fills during a run ends it
// early; every interval written before stays readable.
func TestDiskFullEndsTheRun(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=160k"); err != nil {
		t.Skipf("cannot mount a small tmpfs on %s to fill (needs root): %v", dir, err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, 0) })
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{
		Groups:   []Group{{Workload: tpcbWorkload(t, tpcb.ScriptSelectOnly), Clients: 2, QueryMode: "prepared"}},
		Duration: time.Minute, Tick: 20 * time.Millisecond, Seed: 1, Init: true, LoadWorkers: 2,
	}
	t0 := time.Now()
	res, err := Run(context.Background(), spec, provider(t), st)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(t0); !res.Stopped || took > 45*time.Second {
		t.Fatalf("stopped %v after %s: a full disk should end the run early", res.Stopped, took)
	}
	if !strings.Contains(res.Summary.StopReason, "full") {
		t.Errorf("stop reason %q does not name the full disk", res.Summary.StopReason)
	}
	run, err := st.Load(res.RunID)
	if err != nil {
		t.Fatalf("the run on the full disk does not load: %v", err)
	}
	if len(run.Intervals) == 0 {
		t.Errorf("no interval survived")
	}
	t.Logf("status %s with %d intervals readable", run.Summary.Status, len(run.Intervals))
}
