package cli

import (
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// pgbenchBin is the real pgbench (not /usr/bin/pgbench, Debian's Perl
// wrapper that picks a cluster).
const pgbenchBin = "/usr/lib/postgresql/15/bin/pgbench"

// edgeCase is a script run by pgbench and by pgarena: each one's exit code,
// a pattern of what it said, and the rows the run left in t.
type edgeCase struct {
	name   string
	script string
	args   []string // both tools: -t, -c, -M, -R, -s, --max-tries
	setup  string   // SQL before each tool's run (t is emptied)

	pgbenchExit int
	pgbenchSays string // regexp on pgbench's output
	exit        int    // pgarena's
	says        string // regexp on pgarena's output
	// rows is t's values after pgbench's run ("-": not compared); after
	// pgarena's the same, or none when pgarena refused or failed the run
	rows string
}

// TestScriptEdgesMatchPgbench runs scripts at the edges of pgbench's
// language through the real pgbench and through pgarena, and compares the
// outcome: exit class, committed rows and what each says. Where pgbench
// aborts a run for something a script shows before it runs (COPY, \gset in
// a pipeline), pgarena refuses it as bad input (exit 2); where pgbench
// wraps a sleep it cannot hold, pgarena refuses it.
func TestScriptEdgesMatchPgbench(t *testing.T) {
	if _, err := os.Stat(pgbenchBin); err != nil {
		if pgtest.Required() {
			t.Fatalf("pgbench is required: %v", err)
		}
		t.Skipf("pgbench not installed: %v", err)
	}
	dsn := pgtest.DSN(t)
	admin := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	exec1 := func(sql string) { t.Helper(); exec(t, admin, sql) }
	exec1(`create table t (a bigint); create table pgbench_branches (bid int);
		insert into pgbench_branches select generate_series(1, 5);
		create sequence calls;
		create function fail_twice() returns void language plpgsql as $$
		begin
			if nextval('calls') % 3 <> 0 then
				raise exception 'try again' using errcode = '40001';
			end if;
		end $$`)
	cases := []edgeCase{
		{name: "open-transaction-at-end", script: "begin;\ninsert into t values (1);\n", args: []string{"-t", "3"},
			pgbenchExit: 2, pgbenchSays: `end of script reached without completing the last transaction`,
			exit: 1, says: `(?s)processed: 0\n.*failed transactions: 3 .*end of script reached without completing the last transaction`},
		{name: "copy-from-stdin-simple", script: "insert into t values (1);\ncopy t from stdin;\n", args: []string{"-t", "1", "-M", "simple"},
			pgbenchExit: 2, pgbenchSays: `COPY is not supported`, exit: 2, says: `COPY FROM STDIN and COPY TO STDOUT are not supported`, rows: "-"},
		{name: "copy-from-stdin-extended", script: "copy t from stdin;\n", args: []string{"-t", "1", "-M", "extended"},
			pgbenchExit: 2, pgbenchSays: `COPY is not supported`, exit: 2, says: `COPY FROM STDIN and COPY TO STDOUT are not supported`},
		{name: "copy-to-stdout-prepared", script: "COPY (select 1) TO STDOUT;\n", args: []string{"-t", "1", "-M", "prepared"},
			pgbenchExit: 2, pgbenchSays: `COPY is not supported`, exit: 2, says: `COPY FROM STDIN and COPY TO STDOUT are not supported`},
		{name: "copy-in-compound", script: "select ';' \\; /* copy */ copy t from stdin;\n", args: []string{"-t", "1"},
			pgbenchExit: 2, pgbenchSays: `COPY is not supported`, exit: 2, says: `COPY FROM STDIN and COPY TO STDOUT are not supported`},
		{name: "copy-server-file", script: "copy (select 1) to '/dev/null';\ninsert into t values (1);\n", args: []string{"-t", "1"},
			exit: 0, rows: "1"},
		{name: "scale-default", script: "insert into t values (:scale);\n", args: []string{"-t", "1"},
			pgbenchSays: `scaling factor: 1`, says: `scaling factor: 1`, rows: "1"},
		{name: "scale-given", script: "insert into t values (:scale);\n", args: []string{"-t", "1", "-s", "7"},
			pgbenchSays: `scaling factor: 7`, says: `scaling factor: 7`, rows: "7"},
		{name: "scale-zero", script: "insert into t values (:scale);\n", args: []string{"-t", "1", "-s", "0"},
			pgbenchExit: 1, pgbenchSays: `-s/--scale must be in range 1\.\.`, exit: 2, says: `-s/--scale must be in range 1\.\.`},
		{name: "aset-last-row", script: "select x as v from generate_series(1, 3) x \\aset\ninsert into t values (:v);\n", args: []string{"-t", "1"},
			rows: "3"},
		{name: "sleep-glued-ms", script: "\\sleep 2ms\n\\sleep +1ms\n\\sleep -5\n\\sleep 3 MS\n\\sleep 10us\ninsert into t values (1);\n", args: []string{"-t", "1"},
			rows: "1"},
		{name: "sleep-bad-unit", script: "\\sleep 1.5\ninsert into t values (1);\n", args: []string{"-t", "1"},
			pgbenchExit: 1, pgbenchSays: `unrecognized time unit, must be us, ms or s`, exit: 2, says: `unrecognized time unit "\.5", must be us, ms or s`},
		{name: "sleep-huge-constant", script: "\\sleep 9223372037 s\ninsert into t values (1);\n", args: []string{"-t", "1"},
			// pgbench wraps the time and does not sleep
			rows: "1", exit: 2, says: `sleep time 9223372037 s is too long: at most 2147483647 us`},
		{name: "sleep-huge-variable", script: "\\set s 9223372037\n\\sleep :s s\ninsert into t values (1);\n", args: []string{"-t", "1"},
			rows: "1", exit: 1, says: `sleep :s: sleep time 9223372037 s is too long`},
		{name: "t-with-rate", script: "insert into t values (1);\n", args: []string{"-t", "5", "-c", "2", "-R", "500"},
			pgbenchSays: `actually processed: 10/10`, says: `actually processed: 10\n`, rows: "1,1,1,1,1,1,1,1,1,1"},
		{name: "gset-in-pipeline", script: "\\startpipeline\nselect 1 as one \\gset\n\\endpipeline\ninsert into t values (:one);\n", args: []string{"-t", "1", "-M", "extended"},
			pgbenchExit: 2, pgbenchSays: `\\gset is not allowed in pipeline mode`, exit: 2, says: `\\gset is not allowed in a pipeline`},
		{name: "transactions-retried", script: "select fail_twice();\ninsert into t values (1);\n", args: []string{"-t", "4", "--max-tries", "3"},
			pgbenchSays: `(?s)number of transactions retried: 4 \(100\.000%\)\ntotal number of retries: 8\n`,
			says:        `(?s)number of transactions retried: 4 \(100\.000%\)\ntotal number of retries: 8\n`, rows: "1,1,1,1"},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name+".sql")
			if err := os.WriteFile(file, []byte(tc.script), 0o644); err != nil {
				t.Fatal(err)
			}
			reset := func() { exec1("truncate t; alter sequence calls restart") }
			values := func() string {
				var s string
				if err := admin.QueryRow(context.Background(), "select coalesce(string_agg(a::text, ',' order by a), '') from t").Scan(&s); err != nil {
					t.Fatal(err)
				}
				return s
			}

			reset()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := osexec.CommandContext(ctx, pgbenchBin, append(append([]string{"-n", "-f", file}, tc.args...), dsn)...).CombinedOutput()
			code := 0
			var ee *osexec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.pgbenchExit {
				t.Errorf("pgbench exit %d, want %d\n%s", code, tc.pgbenchExit, out)
			}
			if tc.pgbenchSays != "" && !regexp.MustCompile(tc.pgbenchSays).Match(out) {
				t.Errorf("pgbench did not say %q:\n%s", tc.pgbenchSays, out)
			}
			wantRows := tc.rows
			if got := values(); wantRows != "-" && got != wantRows {
				t.Errorf("pgbench left rows %q, want %q", got, wantRows)
			}

			reset()
			args := append([]string{"run", "script", "-f", file, "--dsn", dsn, "--results", filepath.Join(dir, "results")}, tc.args...)
			r := pgarena(t, nil, args...)
			if r.code != tc.exit {
				t.Errorf("pgarena exit %d, want %d\n%s", r.code, tc.exit, r)
			}
			if tc.says != "" && !regexp.MustCompile(tc.says).MatchString(r.stdout+r.stderr) {
				t.Errorf("pgarena did not say %q:\n%s", tc.says, r)
			}
			if tc.exit == ExitUsage {
				wantUsage(t, r)
			}
			if tc.exit != 0 {
				wantRows = ""
			}
			if got := values(); got != wantRows {
				t.Errorf("pgarena left rows %q, want %q", got, wantRows)
			}
			if strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("a stack trace:\n%s", r.stderr)
			}
		})
	}
}
