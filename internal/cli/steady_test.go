package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestNotSteadyComparesLikeWithLike: a rising --schedule changes the
// commit rate on purpose (20/s to 300/s); the "not steady" finding judges
// only stretches of constant load (all clients started, after the
// warm-up, a constant target rate), and this run has none. A --ramp or a
// --warmup run is judged after them (TestSteadyWindows, and
// TestSteadinessWithinWindows in the sampler): on a shared host the
// server's per-second commit rate is too noisy to assert that a constant
// stretch reads steady.
func TestNotSteadyComparesLikeWithLike(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "nap.sql")
	if err := os.WriteFile(script, []byte("select pg_sleep(0.01);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"rising-schedule", []string{"-c", "8", "-C", "--schedule", "line(20,300,12s)"}},
		{"rising-schedule-ramp-warmup", []string{"-c", "8", "--ramp", "2s", "--warmup", "2s", "--schedule", "line(20,300,12s)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dsn := pgtest.DSN(t)
			args := append([]string{"run", "script", "-f", script, "--dsn", dsn, "--results", t.TempDir()}, c.args...)
			r := mustRun(t, args...)
			if strings.Contains(r.stderr, "not steady") {
				t.Errorf("a planned change of load called not steady:\n%s", r.stderr)
			}
		})
	}
}
