package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// readmeCommands lists the README's command lines that start with prefix,
// split into words (quotes removed, the "# ..." comment cut off).
func readmeCommands(t *testing.T, prefix string) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		l, _, _ = strings.Cut(l, " #")
		var words []string
		for _, w := range strings.Fields(l) {
			words = append(words, strings.Trim(w, `"`))
		}
		out = append(out, words[1:]) // without "pgarena"
	}
	if len(out) == 0 {
		t.Fatalf("README has no line starting %q", prefix)
	}
	return out
}

// withDSN replaces the README's "$DSN" by dsn and appends extra flags.
func withDSN(args []string, dsn string, extra ...string) []string {
	out := make([]string, 0, len(args)+len(extra))
	for _, a := range args {
		if a == "$DSN" {
			a = dsn
		}
		out = append(out, a)
	}
	return append(out, extra...)
}

// TestReadmeYCSBLoadShapes runs the README's ycsb inits that shape the
// load (field length distribution, zero padding, data integrity), each in
// a database of its own (with fewer records), and the README's
// --data-integrity run after the --data-integrity init: every one exits 0.
func TestReadmeYCSBLoadShapes(t *testing.T) {
	t.Parallel()
	var runs [][]string
	for _, c := range readmeCommands(t, "pgarena run ycsb ") {
		if strings.Contains(strings.Join(c, " "), "--data-integrity") {
			runs = append(runs, c)
		}
	}
	n := 0
	for _, c := range readmeCommands(t, "pgarena init ycsb ") {
		line := strings.Join(c, " ")
		if !strings.Contains(line, "--zero-padding") && !strings.Contains(line, "--data-integrity") {
			continue
		}
		n++
		dsn := pgtest.DSN(t)
		mustRun(t, withDSN(c, dsn, "--records", "2000")...)
		if strings.Contains(line, "--data-integrity") {
			for _, r := range runs {
				mustRun(t, withDSN(r, dsn, "--operation-count", "500", "--results", t.TempDir())...)
			}
		}
	}
	if n < 2 || len(runs) == 0 {
		t.Fatalf("README: %d shaped ycsb inits, %d --data-integrity runs", n, len(runs))
	}
}
