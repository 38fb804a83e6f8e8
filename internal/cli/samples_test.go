package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/sampled"
	"github.com/pgarena/pgarena/internal/store"
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

// TestReportServerSeries: an embedded run with a streaming replica on the
// installation the tests run against ($PGARENA_PG_BIN in a version lane of
// make test): every server chart of the HTML report is drawn, each of its
// series with values. The statistics views differ between versions (17
// moved checkpoints to pg_stat_checkpointer, 18 WAL I/O to pg_stat_io).
func TestReportServerSeries(t *testing.T) {
	t.Parallel()
	tmp, err := os.MkdirTemp("", "pgarena-series-cli-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755) // as root, the server account must reach it
	env := append(cleanEnv(), "TMPDIR="+tmp)
	results := t.TempDir()
	r := pgarena(t, env, "run", "tpcb", "-s", "1", "-c", "2", "-T", "3s", "--replica", "streaming",
		"--interval", "500ms", "--sample-interval", "500ms", "-P", "0", "--pg-set", "fsync=off", "--results", results)
	if r.code != 0 {
		t.Fatalf("run --replica streaming:\n%s", r)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	mustRun(t, "report", "last", "-o", out, "--results", results)
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	const open = `<script type="application/json" id="pgarena-data">`
	_, data, ok := strings.Cut(string(html), open)
	data, _, ok2 := strings.Cut(data, "</script>")
	if !ok || !ok2 {
		t.Fatalf("report has no %s", open)
	}
	var set struct {
		Charts []struct {
			ID     string
			Series []struct {
				Name   string
				Values []any // a number, null (no value) or "gap"
			}
		}
	}
	if err := json.Unmarshal([]byte(data), &set); err != nil {
		t.Fatalf("report data: %v", err)
	}
	want := map[string][]string{ // chart: series it must draw ("" = at least one)
		"server-commits":     {"xact_commit_per_s", "xact_rollback_per_s"},
		"server-connections": {"connections.total", "active", "locks.waiting"},
		"server-wal":         {"wal_bytes_per_s"},
		"replication-lag":    {""},
		"replication-bytes":  {""},
	}
	// The waits are those of active sessions: a sample may catch none in
	// a 3 s run of quick transactions, and then there is nothing to draw.
	run, err := store.OpenReadOnly(results).Load("last")
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range run.Samples {
		if smp.Values[sampled.Active] > 0 {
			want["server-waits"] = []string{""}
			break
		}
	}
	for _, c := range set.Charts {
		names, ok := want[c.ID]
		if !ok {
			continue
		}
		delete(want, c.ID)
		drawn := map[string]bool{}
		for _, s := range c.Series {
			for _, v := range s.Values {
				if _, isNum := v.(float64); isNum {
					drawn[s.Name] = true
					break
				}
			}
			if !drawn[s.Name] {
				t.Errorf("chart %s: series %s has no value", c.ID, s.Name)
			}
		}
		for _, n := range names {
			if (n == "" && len(c.Series) == 0) || (n != "" && !drawn[n]) {
				t.Errorf("chart %s lacks series %q (has %v)", c.ID, n, drawn)
			}
		}
	}
	for id := range want {
		t.Errorf("report has no chart %s", id)
	}
}
