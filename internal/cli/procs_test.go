package cli

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestRunProcsAroundSetup: Main.Run gives a run's setup one P
// (netio.SetupProcs) and then the run its threads, so what the run records
// is unchanged: -j 1 runs on one thread, a run without -j on GOMAXPROCS
// as it was; afterwards GOMAXPROCS has its value back. (What the one P
// saves, ~0.5 MB of peak RSS, bench/memory.sh measures.)
func TestRunProcsAroundSetup(t *testing.T) {
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, k := range []struct {
		jobs []string
		want int
	}{{[]string{"-j", "1"}, 1}, {nil, 2}} {
		args := append([]string{"run", "tpcb", "-S", "-c", "2", "-t", "5", "--dsn", dsn, "--results", t.TempDir()}, k.jobs...)
		r := mustRun(t, args...)
		if want := fmt.Sprintf("number of threads: %d\n", k.want); !strings.Contains(r.stdout, want) {
			t.Errorf("run %v: want %q in\n%s", k.jobs, want, r.stdout)
		}
		if got := runtime.GOMAXPROCS(0); got != 2 {
			t.Errorf("run %v: GOMAXPROCS %d after the run, want 2 back", k.jobs, got)
		}
	}
}

// TestStartProcsGivenBack: a process that started on one P
// (internal/startprocs, Main.StartProcs) gets the Ps it started with back
// for every command, and for a run after its setup: a run without -j
// runs on them, and the version command leaves them set.
func TestStartProcsGivenBack(t *testing.T) {
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, args := range [][]string{
		{"version"},
		{"run", "tpcb", "-S", "-c", "2", "-t", "5", "--dsn", dsn, "--results", t.TempDir()},
	} {
		runtime.GOMAXPROCS(1)
		var out, errb strings.Builder
		if code := (Main{Stdout: &out, Stderr: &errb, Env: cleanEnv(), StartProcs: 2}).Run(t.Context(), args); code != 0 {
			t.Fatalf("pgarena %v: exit %d\n%s", args, code, errb.String())
		}
		if args[0] == "run" && !strings.Contains(out.String(), "number of threads: 2\n") {
			t.Errorf("run: want %q in\n%s", "number of threads: 2", out.String())
		}
		if got := runtime.GOMAXPROCS(0); got != 2 {
			t.Errorf("%s: GOMAXPROCS %d afterwards, want 2, what the process started with", args[0], got)
		}
	}
}
