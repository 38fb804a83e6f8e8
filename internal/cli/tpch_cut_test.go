package cli

import (
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestTPCHCutShort: a power run that -T (or -t) ends before its stream has
// run its list is cut short: status stopped, exit 130, one line saying
// why; the figure it could not compute stays uncomputed.
func TestTPCHCutShort(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	mustRun(t, "init", "tpch", "--scale", "0.01", "--load-workers", "2", "--dsn", dsn)
	for _, c := range []struct {
		limit []string
		why   string
	}{
		{[]string{"-T", "0.02"}, "1 of 1 clients had not finished their transaction lists when the run's length (-T 20ms) ended"},
		{[]string{"-t", "3"}, "1 of 1 clients had not finished their transaction lists when -t 3 transactions per client were done"},
		{[]string{"--throughput", "--streams", "2", "-T", "0.02"}, "4 of 4 clients had not finished their transaction lists when the run's length (-T 20ms) ended"},
	} {
		args := append([]string{"run", "tpch", "--power", "--json", "--dsn", dsn, "--results", results}, c.limit...)
		r := pgarena(t, nil, args...)
		if r.code != ExitInterrupted {
			t.Fatalf("%v: exit %d, want %d\n%s", c.limit, r.code, ExitInterrupted, r)
		}
		m := summaryJSON(t, r.stdout)
		if m["status"] != "stopped" || !strings.Contains(m["stop_reason"].(string), c.why) {
			t.Errorf("%v: status %v (%v), want stopped: %s", c.limit, m["status"], m["stop_reason"], c.why)
		}
		if !strings.Contains(r.stderr, "pgarena: run stopped early ("+c.why) || !strings.Contains(r.stderr, "not computed") {
			t.Errorf("%v: the output does not say why or computes the figure:\n%s", c.limit, r.stderr)
		}
	}
}
