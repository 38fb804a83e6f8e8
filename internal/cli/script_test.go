package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestScriptSyntaxError: a script that does not parse is bad input: one
// line naming file:line:column, exit 2, nothing recorded.
func TestScriptSyntaxError(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	bad := filepath.Join(t.TempDir(), "bad.sql")
	if err := os.WriteFile(bad, []byte("SELECT 1;\n\\set x random(1,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "script", "-f", bad, "-t", "1", "--dsn", dsn},
		{"run", "tpcb", "-f", bad + "@2", "-t", "1", "--dsn", dsn},
	} {
		results := filepath.Join(t.TempDir(), "results")
		r := pgarena(t, nil, append(args, "--results", results)...)
		wantUsage(t, r, bad+":2:17: syntax error: unexpected end of expression in \\set")
		noRuns(t, results)
	}
	results := filepath.Join(t.TempDir(), "results")
	r := pgarena(t, nil, "run", "script", "-t", "1", "--dsn", dsn, "--results", results)
	wantUsage(t, r, "no script: give -f FILE[@WEIGHT]")
	noRuns(t, results)
}
