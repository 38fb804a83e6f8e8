package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestSamplesReachExportAndReport: a run with samplers records server and
// host samples; export JSON carries them named by source, and the HTML
// report draws server and host panels.
func TestSamplesReachExportAndReport(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results := t.TempDir()
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	mustRun(t, "run", "tpcb", "-c", "2", "-T", "3s", "--interval", "500ms", "--sample-interval", "500ms",
		"--db-host-local", "-P", "0", "--dsn", dsn, "--results", results)

	ex := mustRun(t, "export", "last", "--format", "json", "--results", results).stdout
	for _, want := range []string{`"samples"`, `"pg_stat_database"`, `"activity"`, `"host_cpu"`, `"pg.xact_commit_per_s"`} {
		if !strings.Contains(ex, want) {
			t.Errorf("export JSON lacks %s", want)
		}
	}
	out := filepath.Join(t.TempDir(), "r.html")
	mustRun(t, "report", "last", "-o", out, "--results", results)
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"server-commits"`, `"server-connections"`, `"host-cpu"`, `href="#server"`, `href="#host"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %s", want)
		}
	}
}
