package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkloadArgs: a workload's positional arguments (sysbench's test)
// are checked as bad input before anything runs; a workload without
// arguments refuses them; help lists the tests.
func TestWorkloadArgs(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results")
	env := append(cleanEnv(), "PGARENA_RESULTS="+results)
	for _, verb := range []string{"run", "init", "check"} {
		wantUsage(t, pgarena(t, env, verb, "sysbench", "oltp_nope"), `sysbench: unknown test "oltp_nope"`, "oltp_point_select")
		wantUsage(t, pgarena(t, env, verb, "sysbench", "oltp_read_only", "oltp_insert"), "one test at most")
		wantUsage(t, pgarena(t, env, verb, "tpcb", "extra"), "tpcb takes no arguments (got extra)")
	}
	noRuns(t, results)
	r := pgarena(t, env, "run", "sysbench", "--help")
	for _, want := range []string{"pgarena run sysbench [TEST] [flags]", "select_random_ranges", "pgarena run sysbench oltp_read_write"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("run sysbench --help lacks %q:\n%s", want, r.stdout)
		}
	}
}
