package cli

import (
	"strings"
	"testing"
)

// TestFindMaxHelpListsItsFlags: find-max parses its own flags itself (the
// others go to each step's run), and --help lists every one of them.
func TestFindMaxHelpListsItsFlags(t *testing.T) {
	t.Parallel()
	r := mustRun(t, "find-max", "--help")
	for _, f := range []string{"--slo", "--start", "--factor", "--max-rate", "--precision", "--window", "--max-steps", "--results", "--json"} {
		if !strings.Contains(r.stdout, "\n      "+f+" ") {
			t.Errorf("find-max --help does not list %s:\n%s", f, r.stdout)
		}
	}
	f, err := parseFindMax([]string{"tpcb", "--slo", "p99<5ms", "--start=7", "--factor", "3", "--max-rate", "70", "--precision", "0.1",
		"--window", "2s", "--max-steps", "5", "--results", "x", "--json"})
	if err != nil || f.start != 7 || f.factor != 3 || f.maxRate != 70 || f.precision != 0.1 || f.window.Seconds() != 2 ||
		f.maxSteps != 5 || f.results != "x" || !f.jsonOut || strings.Join(f.runArgs, " ") != "tpcb" {
		t.Errorf("parseFindMax: %+v, %v", f, err)
	}
}
