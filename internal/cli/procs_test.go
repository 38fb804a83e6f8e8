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
