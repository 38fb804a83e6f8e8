package cli

import (
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/golden"
	"github.com/pgarena/pgarena/internal/report/reporttest"
)

func TestCompareGolden(t *testing.T) {
	t.Parallel()
	dir, ids := fixtures(t)

	r := mustRun(t, "compare", "--results", dir, ids[0], ids[3])
	golden.Check(t, "compare-runs.golden", []byte(r.stdout))
	if r.stderr != "" {
		t.Errorf("same host, version and settings: no warnings expected, got:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "is faster than") {
		t.Errorf("pool-b is 5%% faster with little noise: want a faster verdict:\n%s", r.stdout)
	}

	r = mustRun(t, "compare", "--results", dir, "--group-by", "label", "label~pool-*")
	golden.Check(t, "compare-groups.golden", []byte(r.stdout))
	for _, want := range []string{"(n=3)", "verdict: pool-b is faster than pool-a on tps"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("grouped compare lacks %q:\n%s", want, r.stdout)
		}
	}
	// The same groups judged on p95 with pool-b as the baseline: slower.
	r = mustRun(t, "compare", "--results", dir, "--group-by", "label", "--metric", "p95", "--baseline", "pool-b", "label~pool-*")
	if !strings.Contains(r.stdout, "verdict: pool-a is slower than pool-b on p95") {
		t.Errorf("want pool-a slower on p95:\n%s", r.stdout)
	}
}

func TestCompareRefusesAndWarns(t *testing.T) {
	t.Parallel()
	dir, ids := fixtures(t)
	// ids[6] is at scale 100 on another host, server version and settings.
	wantUsage(t, pgarena(t, nil, "compare", "--results", dir, ids[0], ids[6]),
		"refusing to compare", "scale", "--force")
	r := mustRun(t, "compare", "--results", dir, "--force", ids[0], ids[6])
	for _, want := range []string{"scale values differ", "client hosts differ", "server versions differ", "server settings differ: shared_buffers"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks warning %q:\n%s", want, r.stderr)
		}
	}
	wantUsage(t, pgarena(t, nil, "compare", "--results", dir, ids[0]), "at least two")
	wantUsage(t, pgarena(t, nil, "compare", "--results", dir, "--metric", "nopm", ids[0], ids[1]), "--metric")
	// An interrupted run is compared with what it has, and marked.
	r = mustRun(t, "compare", "--results", dir, ids[0], ids[7])
	if !strings.Contains(r.stdout, ids[7]+" (interrupted)") {
		t.Errorf("interrupted run not marked:\n%s", r.stdout)
	}
}

// TestCompareSweeps: two sweeps compare step by step; a sweep and a
// single-level run are refused unless --force.
func TestCompareSweeps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	faster := reporttest.Sweep()
	faster.Label, faster.Speed = "sweep-b", 1.2
	single := reporttest.Standard()[0]
	ids, err := reporttest.Write(dir, []reporttest.Fixture{reporttest.Sweep(), faster, single})
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, "compare", "--results", dir, ids[0], ids[1])
	for _, want := range []string{"== step 1: 2 clients ==", "== step 2: 4 clients ==", "== step 3: 8 clients =="} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("compare of two sweeps lacks %q:\n%s", want, r.stdout)
		}
	}
	if n := strings.Count(r.stdout, "verdict: "); n != 3 {
		t.Errorf("%d verdicts, want one per step:\n%s", n, r.stdout)
	}
	wantUsage(t, pgarena(t, nil, "compare", "--results", dir, ids[0], ids[2]), "refusing to compare", "sweeps", "--force")
}
