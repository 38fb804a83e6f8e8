package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestPgbenchFlags runs tpcb with pgbench's spellings: init with -F, -n,
// -I and --random-seed; a run with every long form, -l with
// --aggregate-interval, --progress-timestamp and --failures-detailed; an
// open-loop run with a sampled per-transaction log; the logs agree with the
// summaries.
func TestPgbenchFlags(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results, logs := t.TempDir(), t.TempDir()

	r := mustRun(t, "init", "tpcb", "--scale=1", "-F", "90", "-n", "-I", "dtgvp", "--random-seed=7", "--dsn", dsn)
	if !strings.Contains(r.stderr, "-n: pgarena init always ends with VACUUM ANALYZE") {
		t.Errorf("init -n: no note:\n%s", r.stderr)
	}
	var opts []string
	if err := connect(t, dsn).QueryRow(context.Background(),
		"select reloptions from pg_class where relname = 'pgbench_accounts'").Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(opts, ","), "fillfactor=90") {
		t.Errorf("-F 90: pgbench_accounts has options %v", opts)
	}

	agg := filepath.Join(logs, "agg")
	r = mustRun(t, "run", "tpcb", "--client=3", "--jobs=2", "--time=2", "--protocol=prepared", "--random-seed=time", "--no-vacuum",
		"--progress=1", "--progress-timestamp", "--max-tries=2", "--log", "--log-prefix="+agg, "--aggregate-interval=1",
		"--failures-detailed", "--verbose-errors", "--json", "--results", results, "--dsn", dsn)
	m := summaryJSON(t, r.stdout)
	if num(t, m, "clients") != 3 || str(t, m, "query_mode") != "prepared" {
		t.Errorf("--client=3 --protocol=prepared: clients %v, query mode %v", m["clients"], m["query_mode"])
	}
	if !regexp.MustCompile(`(?m)^progress: \d{10}\.\d{3} s, [\d.]+ tps`).MatchString(r.stderr) {
		t.Errorf("--progress-timestamp: no epoch progress lines:\n%s", r.stderr)
	}
	for _, want := range []string{"number of serialization failures: 0 (0.000%)", "number of deadlock failures: 0", "note: random seed time: "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	spec := runSpec(t, results, str(t, m, "run_id"))
	pid := strconv.Itoa(os.Getpid())
	files := []string{agg + "." + pid, agg + "." + pid + ".1"} // -j 2: pgbench's names
	if got := spec.Load["pgbench_logs"]; got != strings.Join(files, " ") {
		t.Errorf("run spec records logs %q, want %q", got, strings.Join(files, " "))
	}
	if spec.Seed == 1 || spec.Seed == 0 {
		t.Errorf("--random-seed=time recorded seed %d", spec.Seed)
	}
	var committed int64
	for _, f := range files {
		for _, line := range fileLines(t, f) {
			fs := strings.Fields(line)
			if len(fs) != 15 {
				t.Fatalf("%s: %q has %d fields, want pgbench's 15", f, line, len(fs))
			}
			n, _ := strconv.ParseInt(fs[1], 10, 64)
			committed += n
		}
	}
	if committed != int64(num(t, m, "transactions")) {
		t.Errorf("aggregated logs count %d transactions, the summary %v", committed, m["transactions"])
	}

	// Open loop: per-transaction lines carry the schedule lag; sampled.
	sampled := filepath.Join(logs, "rate")
	r = mustRun(t, "run", "tpcb", "-c", "2", "--rate=200", "--latency-limit=1000", "-T", "2", "-l", "--log-prefix="+sampled,
		"--sampling-rate=0.5", "--json", "--results", results, "--dsn", dsn)
	m = summaryJSON(t, r.stdout)
	lines := fileLines(t, sampled+"."+pid)
	total := num(t, m, "transactions") + num(t, m, "failed") // skipped lines are logged too
	if sk, ok := m["skipped"].(float64); ok {
		total += sk
	}
	if n := float64(len(lines)); total >= 100 && (n < 0.3*total || n > 0.7*total) {
		t.Errorf("--sampling-rate 0.5 logged %v of %v transactions", n, total)
	}
	for _, line := range lines {
		if fs := strings.Fields(line); len(fs) != 7 {
			t.Fatalf("%q: %d fields, want 7 (with schedule_lag)", line, len(fs))
		}
	}
}

// TestPgbenchFlagsRefused: flags pgarena cannot honour exit 2 with one line
// naming the alternative, before anything connects.
func TestPgbenchFlagsRefused(t *testing.T) {
	t.Parallel()
	dsn := "host=/nonexistent dbname=x"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "tpcb", "-v"}, "VACUUM ANALYZE yourself"},
		{[]string{"run", "tpcb", "-i"}, "pgarena init tpcb"},
		{[]string{"run", "tpcb", "--exit-on-abort"}, "--autostop"},
		{[]string{"run", "tpcb", "--aggregate-interval=5"}, "add -l"},
		{[]string{"run", "tpcb", "-l", "--aggregate-interval=0"}, "positive number of seconds"},
		{[]string{"run", "tpcb", "-l", "--sampling-rate=2"}, "at most 1"},
		{[]string{"run", "tpcb", "-l", "--sampling-rate=0.1", "--aggregate-interval=1"}, "cannot be used together"},
		{[]string{"run", "tpcb", "--random-seed=soon"}, "time or rand"},
		{[]string{"run", "tpcb", "-l", "--log-prefix=/nonexistent/dir/x"}, "/nonexistent/dir does not exist"},
		{[]string{"init", "tpcb", "--foreign-keys"}, "ALTER TABLE"},
		{[]string{"init", "tpcb", "-I", "dtgvpf"}, "foreign keys"},
		{[]string{"init", "tpcb", "-I", "dtg"}, "adds keys (p)"},
		{[]string{"init", "tpcb", "-I", "dtgxp"}, "unknown init step"},
		{[]string{"init", "tpcb", "--partition-method=hash", "--partitions=4"}, "by range only"},
		{[]string{"init", "tpcb", "--tablespace=fast"}, "default_tablespace"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			results := t.TempDir()
			r := pgarena(t, nil, append(tc.args, "--dsn", dsn, "--results", results)...)
			if tc.args[0] == "init" {
				r = pgarena(t, nil, append(tc.args, "--dsn", dsn)...)
			}
			wantUsage(t, r, tc.want)
			noRuns(t, results)
		})
	}
}

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// runSpec reads a run's spec.json.
func runSpec(t *testing.T, results, id string) (s struct {
	Seed int64             `json:"seed"`
	Load map[string]string `json:"load"`
}) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(results, id, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(fmt.Errorf("spec.json: %w", err))
	}
	return s
}

// TestLogRetriesPerTransaction: with --max-tries 2, each line of -l's log
// carries its own transaction's retries. A script whose every third try
// fails with a serialization failure (a sequence counts the tries) gives
// retries 1, 0, 1, 0, ...: a count left over from the last transaction
// would show 1 on every line.
func TestLogRetriesPerTransaction(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	if _, err := connect(t, dsn).Exec(context.Background(), "create sequence tries"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "retry.sql")
	body := "DO $$ BEGIN IF nextval('tries') % 3 = 1 THEN RAISE EXCEPTION 'try again' USING ERRCODE = '40001'; END IF; END $$;\n"
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(dir, "log")
	mustRun(t, "run", "script", "-f", script, "-c", "1", "-t", "6", "-M", "simple", "--max-tries=2", "-l",
		"--log-prefix="+prefix, "--results", filepath.Join(dir, "results"), "--dsn", dsn)
	var got []string
	for _, line := range fileLines(t, prefix+"."+strconv.Itoa(os.Getpid())) {
		fs := strings.Fields(line)
		got = append(got, fs[len(fs)-1])
	}
	if want := "1 0 1 0 1 0"; strings.Join(got, " ") != want {
		t.Errorf("retries per logged transaction %q, want %q", strings.Join(got, " "), want)
	}
}
