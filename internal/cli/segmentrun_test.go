package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
)

// agentsEnv makes --agents' children (this test binary) behave as pgarena.
func agentsEnv() []string { return append(cleanEnv(), cliMainEnv+"=1") }

// startIn is a --start-at d from now.
func startIn(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339Nano) }

// agentsRun runs --agents n and returns the merged run and its segments'
// ids.
func agentsRun(t *testing.T, results string, args ...string) (*store.Run, []string) {
	t.Helper()
	r := pgarena(t, agentsEnv(), append([]string{"run"}, append(args, "--results", results)...)...)
	if r.code != 0 {
		t.Fatalf("run --agents:\n%s", r)
	}
	m, err := store.OpenReadOnly(results).Load("last")
	if err != nil || len(m.Spec.MergedFrom) == 0 {
		t.Fatalf("last run %v: %v", m, err)
	}
	return m, m.Spec.MergedFrom
}

// waitFor polls cond every 50 ms for at most limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// intervalsOf counts the intervals a (live) run has recorded.
func intervalsOf(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, store.IntervalsFile))
	return strings.Count(string(b), "\n")
}

// merge joins only segments of one run: plain runs, a plain run with
// segments, segments of two --agents runs, segments with another seed and
// a merged run are refused (exit 2, the reason in one line); a --start-at
// in the past and --segment without --start-at are bad input.
func TestMergeOnlySegmentsOfOneRun(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	run := []string{"tpcb", "-c", "2", "-T", "1s", "--interval", "500ms", "-P", "0", "--dsn", dsn}
	var plain []string
	for range 2 {
		mustRun(t, append(append([]string{"run"}, run...), "--results", results)...)
		last, err := store.OpenReadOnly(results).Load("last")
		if err != nil {
			t.Fatal(err)
		}
		plain = append(plain, last.ID)
	}
	mergedA, a := agentsRun(t, results, append(run, "--agents", "2")...)
	_, b := agentsRun(t, results, append(run, "--agents", "2")...)

	// Two segments started by hand with one --start-at but other seeds.
	start := startIn(2 * time.Second)
	ids := t.TempDir()
	var wg sync.WaitGroup
	for i, seed := range []string{"1", "2"} {
		wg.Go(func() {
			r := pgarena(t, nil, append(append([]string{"run"}, run...), "--results", results, "--seed", seed,
				"--segment", []string{"0/2", "1/2"}[i], "--start-at", start, "--segment-id-file", filepath.Join(ids, seed))...)
			if r.code != 0 {
				t.Errorf("segment %d:\n%s", i, r)
			}
		})
	}
	wg.Wait()
	var seeded []string
	for _, f := range []string{"1", "2"} {
		b, err := os.ReadFile(filepath.Join(ids, f))
		if err != nil {
			t.Fatal(err)
		}
		seeded = append(seeded, strings.TrimSpace(string(b)))
	}

	merge := func(refs ...string) result {
		return pgarena(t, nil, append([]string{"merge", "--results", results}, refs...)...)
	}
	wantUsage(t, merge(plain...), plain[0]+" is not a segment")
	wantUsage(t, merge(a[0], plain[0], a[1]), plain[0]+" is not a segment")
	wantUsage(t, merge(a[0], b[1]), "not segments of one run", "whole runs (--segment-of) differ")
	wantUsage(t, merge(mergedA.ID), mergedA.ID+" is itself a merged run")
	wantUsage(t, merge(seeded...), "seeds differ (1 vs 2)")
	// The segments of one run still merge.
	if r := merge(b...); r.code != 0 {
		t.Fatalf("merge of one run's segments:\n%s", r)
	}

	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	wantUsage(t, pgarena(t, nil, append(append([]string{"run"}, run...), "--results", results, "--segment", "0/2", "--start-at", past)...), "in the past")
	wantUsage(t, pgarena(t, nil, append(append([]string{"run"}, run...), "--results", results, "--agents", "2", "--start-at", past)...), "in the past")
	wantUsage(t, pgarena(t, nil, "k8s", "tpcb", "-c", "2", "--agents", "2", "--dsn", "host=db", "--start-at", past), "in the past")
	wantUsage(t, pgarena(t, nil, append(append([]string{"run"}, run...), "--results", results, "--segment", "0/2")...), "needs --start-at")
}

// A segment held up past --start-at (its database locked while it reads
// the scale) starts measuring late: merged with one on time, the run is
// partial (exit 1) and names it.
func TestLateSegmentMakesMergePartial(t *testing.T) {
	t.Parallel()
	dsnOnTime, dsnLate := pgtest.DSN(t), pgtest.DSN(t)
	for _, dsn := range []string{dsnOnTime, dsnLate} {
		mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	}
	lock := connect(t, dsnLate)
	exec(t, lock, "begin")
	exec(t, lock, "lock table pgbench_branches in access exclusive mode")
	results, ids := t.TempDir(), t.TempDir()
	start := startIn(3 * time.Second)
	var wg sync.WaitGroup
	for i, dsn := range []string{dsnOnTime, dsnLate} {
		wg.Go(func() {
			seg := []string{"0/2", "1/2"}[i]
			r := pgarena(t, nil, "run", "tpcb", "-c", "2", "-T", "3s", "--interval", "250ms", "-P", "0", "--dsn", dsn, "--results", results,
				"--segment", seg, "--start-at", start, "--segment-id-file", filepath.Join(ids, seg[:1]))
			if r.code != 0 {
				t.Errorf("segment %s:\n%s", seg, r)
			}
		})
	}
	// Release the late segment once the other has measured 1.5 s.
	waitFor(t, 30*time.Second, "segment 0 measuring", func() bool {
		b, err := os.ReadFile(filepath.Join(ids, "0"))
		return err == nil && intervalsOf(filepath.Join(results, strings.TrimSpace(string(b)))) >= 6
	})
	exec(t, lock, "rollback")
	wg.Wait()
	var refs []string
	for _, f := range []string{"0", "1"} {
		b, err := os.ReadFile(filepath.Join(ids, f))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, strings.TrimSpace(string(b)))
	}
	r := pgarena(t, nil, "merge", "--results", results, refs[0], refs[1])
	if r.code != ExitFailed || !strings.Contains(r.stderr, "segment 1/2 (run "+refs[1]+") started") || !strings.Contains(r.stderr, "after --start-at") ||
		strings.Contains(r.stderr, "segment 0/2 (run") {
		t.Fatalf("merge:\n%s", r)
	}
	if m, err := store.OpenReadOnly(results).Load("last"); err != nil || m.Status != metrics.StatusPartial {
		t.Fatalf("merged run %v: %v", m, err)
	}
}

// Four segments started in the same second on "four machines" (results
// directories), their runs copied into one directory as the README says:
// four runs (no id collides), which merge into one complete run; segments
// started by hand share their --start-at as the whole run's identity.
func TestFourMachinesSegmentsCopiedTogether(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	start := startIn(4 * time.Second) // four runs connect and prepare before it
	machines := make([]string, 4)
	var wg sync.WaitGroup
	for i := range machines {
		machines[i] = t.TempDir()
		wg.Go(func() {
			r := pgarena(t, nil, "run", "tpcb", "-c", "4", "-T", "1s", "--interval", "500ms", "-P", "0", "--dsn", dsn,
				"--results", machines[i], "--segment", []string{"0/4", "1/4", "2/4", "3/4"}[i], "--start-at", start)
			if r.code != 0 {
				t.Errorf("segment %d:\n%s", i, r)
			}
		})
	}
	wg.Wait()
	all := t.TempDir()
	var refs []string
	for _, m := range machines {
		entries, err := os.ReadDir(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if err := os.CopyFS(filepath.Join(all, e.Name()), os.DirFS(filepath.Join(m, e.Name()))); err != nil {
				t.Fatalf("copy %s: %v (an id taken twice)", e.Name(), err)
			}
			refs = append(refs, e.Name())
		}
	}
	runs, err := store.OpenReadOnly(all).List()
	if err != nil || len(runs) != 4 {
		t.Fatalf("%d runs in the collected directory (%v), want 4: %v", len(runs), err, refs)
	}
	if r := pgarena(t, nil, append([]string{"merge", "--results", all}, refs...)...); r.code != 0 {
		t.Fatalf("merge:\n%s", r)
	}
}

// --agents: with --json the merged summary is JSON on stdout; each agent's
// first line names its own share of the clients; Ctrl-C exits 130 as a run
// does, after merging what the agents recorded.
func TestAgentsJSONHeaderAndInterrupt(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	r := pgarena(t, agentsEnv(), "run", "tpcb", "-c", "5", "-T", "1s", "--interval", "500ms", "-P", "0", "--agents", "2",
		"--dsn", dsn, "--results", results, "--json")
	if r.code != 0 {
		t.Fatalf("run --agents --json:\n%s", r)
	}
	var sum metrics.Summary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum.Clients != 5 || sum.Transactions == 0 {
		t.Fatalf("stdout is not the merged summary as JSON (%v):\n%s", err, r)
	}
	for _, want := range []string{"[agent 0] run ", "tpcb, segment 0/2: 2 of 5 clients", "[agent 1] run ", "tpcb, segment 1/2: 3 of 5 clients"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	interrupted := t.TempDir()
	go func() {
		done <- pgarenaCtx(t, ctx, agentsEnv(), "run", "tpcb", "-c", "2", "-T", "60s", "--interval", "250ms", "-P", "0", "--agents", "2",
			"--dsn", dsn, "--results", interrupted)
	}()
	waitFor(t, 60*time.Second, "both agents measuring", func() bool {
		entries, _ := os.ReadDir(interrupted)
		n := 0
		for _, e := range entries {
			if intervalsOf(filepath.Join(interrupted, e.Name())) > 0 {
				n++
			}
		}
		return n == 2
	})
	cancel() // Ctrl-C
	r = <-done
	if r.code != ExitInterrupted {
		t.Fatalf("interrupted --agents: exit %d, want %d\n%s", r.code, ExitInterrupted, r)
	}
	m, err := store.OpenReadOnly(interrupted).Load("last")
	if err != nil || len(m.Spec.MergedFrom) != 2 || m.Status != metrics.StatusPartial || m.Summary.Transactions == 0 {
		t.Fatalf("merged run after the interrupt: %+v %v", m, err)
	}
}

// NOPM is the d_next_o_id delta over the measured window, within 1%, for a
// plain run, a segment that waited for --start-at and a merge of --agents
// (which wait for their start too); the merged NOPM agrees with the summed
// client counts, so segment 0's own comparison is not kept.
func TestNOPMOverTheMeasuredWindow(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcc", "-w", "1", "--dsn", dsn)
	conn := connect(t, dsn)
	nextOID := func() float64 {
		var n float64
		if err := conn.QueryRow(context.Background(), "select sum(d_next_o_id)::float8 from district").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	results := t.TempDir()
	base := []string{"run", "tpcc", "-c", "2", "-T", "4s", "-P", "0", "--dsn", dsn, "--results", results, "--json"}
	for _, c := range []struct {
		name string
		args func() []string
	}{
		{"plain run", func() []string { return nil }},
		{"segment with a start wait", func() []string { return []string{"--segment", "0/2", "--start-at", startIn(4 * time.Second)} }},
		{"merge of --agents", func() []string { return []string{"--agents", "2"} }},
	} {
		before := nextOID()
		r := pgarena(t, agentsEnv(), append(base, c.args()...)...)
		if r.code != 0 {
			t.Fatalf("%s:\n%s", c.name, r)
		}
		delta := nextOID() - before
		var sum metrics.Summary
		if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, r)
		}
		figs := map[string]metrics.Figure{}
		for _, f := range sum.Figures {
			figs[f.Name] = f
		}
		want := delta / (sum.DurationS / 60)
		nopm := figs["nopm"]
		// The figures' window ends after the drain (the database counts
		// what committed in it, and so do the clients' figures): on a busy
		// host the drain's share of the window is allowed beside the 1%.
		window := sum.End.Sub(sum.Start).Seconds()
		tolerance := 0.01 + max(0, (window-sum.DurationS)/window)
		t.Logf("%s: nopm %.0f, d_next_o_id delta %.0f over %.3f s = %.0f/min (window %.3f s); %s", c.name, nopm.Value, delta, sum.DurationS, want, window, nopm.Note)
		if delta == 0 || math.Abs(nopm.Value-want)/want > tolerance {
			t.Errorf("%s: nopm %.0f, want %.0f (within %.1f%%)", c.name, nopm.Value, want, 100*tolerance)
		}
		// The database's count is bracketed by one segment's snapshots; on
		// a busy host another segment's drain can end after them, so the
		// clients may count more, by at most the drain's share of the
		// window (a missing segment would be ~50%).
		if clients := figs["nopm_clients"].Value; strings.Contains(nopm.Note, "differ") &&
			math.Abs(clients-nopm.Value)/nopm.Value > tolerance {
			t.Errorf("%s: merged nopm %.0f, clients %.0f (more than %.1f%% apart), and the note says %q", c.name, nopm.Value, clients, 100*tolerance, nopm.Note)
		}
	}
}
