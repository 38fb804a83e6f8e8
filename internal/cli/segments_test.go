package cli

import (
	"bytes"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
)

// --agents 3: three child processes, one merged run whose transactions are
// the sum of the segments' and whose p99 is the merged histogram's.
func TestAgentsMergeIntoOneRun(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t, nil)
	dsn := c.DSN("postgres")
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	env := append(cleanEnv(), cliMainEnv+"=1")
	r := pgarena(t, env, "run", "tpcb", "-c", "3", "-T", "2s", "--interval", "500ms", "-P", "0",
		"--agents", "3", "--dsn", dsn, "--results", results, "--label", "x3")
	if r.code != 0 {
		t.Fatalf("run --agents 3:\n%s", r)
	}
	st := store.OpenReadOnly(results)
	runs, err := st.List()
	if err != nil || len(runs) != 4 {
		t.Fatalf("%d runs (%v), want 3 segments and the merged one", len(runs), err)
	}
	merged, err := st.Load("last")
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Spec.MergedFrom) != 3 || merged.Status != metrics.StatusComplete || merged.Spec.Label != "x3" {
		t.Fatalf("last run: merged from %v, status %s, label %q", merged.Spec.MergedFrom, merged.Status, merged.Spec.Label)
	}
	var sum int64
	for _, id := range merged.Spec.MergedFrom {
		seg, err := st.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if seg.Spec.Segment == "" || seg.Spec.Clients != 1 {
			t.Fatalf("segment run %s: segment %q, %d clients", id, seg.Spec.Segment, seg.Spec.Clients)
		}
		sum += seg.Summary.Transactions
	}
	if sum == 0 || merged.Summary.Transactions != sum {
		t.Fatalf("merged %d transactions, segments %d", merged.Summary.Transactions, sum)
	}
	hists, err := merged.Histograms()
	if err != nil {
		t.Fatal(err)
	}
	total := metrics.NewHistogram()
	for _, h := range hists {
		metrics.MergeHistogram(total, h)
	}
	if p99 := metrics.Stats(total).P99; p99 != merged.Summary.Latency.P99 {
		t.Fatalf("summary p99 %g ms, merged histogram's %g ms", merged.Summary.Latency.P99, p99)
	}
	// The merged run's configuration is the whole run's: three agents.
	shown := mustRun(t, "show", "last", "--config", "--results", results).stdout
	if !strings.Contains(shown, "agents: 3") || strings.Contains(shown, "segment") || !strings.Contains(shown, "label: x3") {
		t.Errorf("show --config of the merged run:\n%s", shown)
	}
}

// A segment killed with SIGKILL leaves an interrupted run: merging makes a
// partial run (exit 1) that names it.
func TestKilledSegmentMakesPartialMerge(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t, nil)
	dsn := c.DSN("postgres")
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	results := t.TempDir()
	start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	var cmds []*osexec.Cmd
	ids := t.TempDir()
	for i := range 3 {
		cmd := osexec.Command(os.Args[0], "run", "tpcb", "-c", "3", "-T", "4s", "--interval", "250ms", "-P", "0",
			"--segment", []string{"0/3", "1/3", "2/3"}[i], "--start-at", start, "--dsn", dsn, "--results", results,
			"--segment-id-file", ids+"/"+[]string{"0", "1", "2"}[i])
		cmd.Env = append(cleanEnv(), cliMainEnv+"=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	// Segment 1 is killed 1.5 s into the measured part: once it recorded 6
	// intervals (60 s at most).
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		id, _ := os.ReadFile(ids + "/1")
		if b, err := os.ReadFile(filepath.Join(results, strings.TrimSpace(string(id)), store.IntervalsFile)); len(id) > 0 && err == nil && bytes.Count(b, []byte("\n")) >= 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("segment 1 did not record 6 intervals within 60 s")
		}
	}
	if err := cmds[1].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil && i != 1 {
			t.Fatalf("segment %d: %v", i, err)
		}
	}
	var refs []string
	for i := range 3 {
		b, err := os.ReadFile(ids + "/" + []string{"0", "1", "2"}[i])
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, strings.TrimSpace(string(b)))
	}
	r := pgarena(t, nil, append([]string{"merge", "--results", results, "--label", "killed"}, refs...)...)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "partial") || !strings.Contains(r.stderr, "segment 1/3 (run "+refs[1]+") is interrupted") {
		t.Fatalf("merge:\n%s", r)
	}
	m, err := store.OpenReadOnly(results).Load("last")
	if err != nil || m.Status != metrics.StatusPartial || m.Summary.Transactions == 0 {
		t.Fatalf("merged run: %v %v", m, err)
	}
}
