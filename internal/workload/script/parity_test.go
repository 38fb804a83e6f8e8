package script

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/workload"
)

// runDriver runs the script workload of args (-f ...) through the driver as
// `pgarena run script` would: clients clients on threads -j threads, txs
// transactions each, --max-tries tries, -r on.
func runDriver(t *testing.T, dsn string, mode pgx.QueryExecMode, args []string, seed uint64, clients, threads, txs, tries int) metrics.Summary {
	t.Helper()
	w := NewWorkload()
	if err := w.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	w.SetSeed(seed)
	w.SetThreads(threads)
	if err := w.ValidateRun(clients); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rec := metrics.NewRecorder(w.TxTypes(), time.Now())
	var acc metrics.Accumulator
	_, err = driver.Run(ctx, w, func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, cfg) },
		driver.Config{Clients: clients, Transactions: txs, MaxTries: tries, StatementLatencies: true,
			Tick: 50 * time.Millisecond, OnInterval: acc.Add}, rec)
	if err != nil {
		t.Fatal(err)
	}
	sum := metrics.Summary{MaxTries: tries}
	acc.Fill(&sum)
	for tx := range sum.Tx { // as the session names them
		for i, c := range w.Statements(workload.TxType(tx)) {
			if i < len(sum.Tx[tx].Statements) {
				sum.Tx[tx].Statements[i].Command = c
			}
		}
	}
	return sum
}

// statementRows are the rows of -r in a summary's text (pgbench's, or
// pgarena's) after the mean time: failures, retries and the command, one
// space between fields. pgarena prints pgbench 15's columns; pgbench 17 and
// later print them one or two spaces narrower.
func statementRows(text string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "statement latencies in milliseconds") {
			in = true
			continue
		}
		if in && pgbenchStatementRow.MatchString(l) {
			out = append(out, strings.Join(strings.Fields(l)[1:], " "))
		}
	}
	return out
}

// rows returns query's rows, each as text.
func rows(t *testing.T, conn *pgx.Conn, query string) []string {
	t.Helper()
	r, err := conn.Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(r, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func sameRows(t *testing.T, want, got []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("pgbench: %d rows, pgarena: %d", len(want), len(got))
	}
	diff := 0
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			if diff < 5 {
				t.Errorf("row %d:\npgbench %s\npgarena %s", i, want[i], got[i])
			}
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d rows differ", diff, len(want))
	}
}

// pgbenchStatementRow is one row of pgbench -r with --max-tries above 1:
// mean ms, failures, retries, command.
var pgbenchStatementRow = regexp.MustCompile(`^\s+[0-9.]+\s+(\d+)\s+(\d+) (.*)$`)

// pgbenchStatements reads pgbench -r's failures and retries per command.
func pgbenchStatements(t *testing.T, out string) (failures, retries []int64) {
	t.Helper()
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "statement latencies in milliseconds, failures and retries:") {
			in = true
			continue
		}
		m := pgbenchStatementRow.FindStringSubmatch(l)
		if !in || m == nil {
			continue
		}
		f, _ := strconv.ParseInt(m[1], 10, 64)
		r, _ := strconv.ParseInt(m[2], 10, 64)
		failures, retries = append(failures, f), append(retries, r)
	}
	if len(failures) == 0 {
		t.Fatalf("no per-statement rows in pgbench's output:\n%s", out)
	}
	return failures, retries
}

// TestRetryReplaysDraws: with --max-tries 2, a transaction failing with a
// serialization failure is retried with the random values of the failed
// attempt, as pgbench restores the client's random state. fail_once fails
// the calls of each client in a fixed pattern (a call number c succeeds
// when c mod 5 is 0 or 3), so transactions are retried and succeed (c mod
// 5 = 0: the attempt before failed), fail twice (counted failed), or
// succeed at once. pgbench and pgarena must commit the same rows, each
// retried one with the failed attempt's draws, and count the same
// failures and retries at the same command (-r).
func TestRetryReplaysDraws(t *testing.T) {
	needPgbench(t)
	dsn := pgtest.DSN(t)
	admin := connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	const clients, txs = 2, 20
	mustExec(t, admin, `create table draws (client int, call bigint, a bigint, b bigint, failed_a bigint, failed_b bigint)`)
	for c := 0; c < clients; c++ {
		mustExec(t, admin, fmt.Sprintf("create sequence calls_%d; create sequence fa_%d; create sequence fb_%d", c, c, c))
	}
	// Sequences are not transactional: the failed attempt's values and the
	// call count survive its rollback.
	mustExec(t, admin, `create function fail_once(cid int, a bigint, b bigint) returns void language plpgsql as $$
declare
	c bigint := nextval('calls_' || cid);
	fa bigint;
	fb bigint;
begin
	if c % 5 not in (0, 3) then
		perform setval('fa_' || cid, a);
		perform setval('fb_' || cid, b);
		raise exception 'fail call %', c using errcode = '40001';
	end if;
	execute format('select last_value from %I', 'fa_' || cid) into fa;
	execute format('select last_value from %I', 'fb_' || cid) into fb;
	insert into draws values (cid, c, a, b, fa, fb);
end $$`)
	reset := func() {
		mustExec(t, admin, "truncate draws")
		for c := 0; c < clients; c++ {
			mustExec(t, admin, fmt.Sprintf("alter sequence calls_%d restart", c))
		}
	}
	const dump = "select row(client, call, a, b, failed_a, failed_b)::text from draws order by client, call"
	for mode, qm := range modes {
		t.Run(mode, func(t *testing.T) {
			reset()
			out := pgbench(t, dsn, "-n", "-r", "-f", "testdata/retry.sql", "-t", fmt.Sprint(txs), "-c", fmt.Sprint(clients),
				"-j", fmt.Sprint(clients), "-M", mode, "--random-seed", "42", "--max-tries", "2")
			want := rows(t, admin, dump)
			wantFail, wantRetry := pgbenchStatements(t, out)
			reset()
			sum := runDriver(t, dsn, qm, []string{"-f", "testdata/retry.sql"}, 42, clients, clients, txs, 2)
			got := rows(t, admin, dump)
			sameRows(t, want, got)

			retried := 0
			for _, r := range rows(t, admin, "select (call % 5 = 0)::text || ' ' || (a = failed_a and b = failed_b)::text from draws") {
				if r == "true false" {
					t.Errorf("a retried transaction drew other values than its failed attempt")
				}
				if r == "true true" {
					retried++
				}
			}
			if retried == 0 {
				t.Error("no transaction was retried")
			}
			if len(sum.Tx) != 1 {
				t.Fatalf("%d transaction types", len(sum.Tx))
			}
			st := sum.Tx[0].Statements
			if len(st) != len(wantFail) {
				t.Fatalf("pgarena: %d statements, pgbench %d", len(st), len(wantFail))
			}
			for i := range st {
				if st[i].Failures != wantFail[i] || st[i].Retries != wantRetry[i] {
					t.Errorf("command %d: pgarena %d failures %d retries, pgbench %d and %d",
						i, st[i].Failures, st[i].Retries, wantFail[i], wantRetry[i])
				}
			}
			var text strings.Builder
			report.SummaryText(&text, &sum)
			if w, g := statementRows(out), statementRows(text.String()); strings.Join(w, "\n") != strings.Join(g, "\n") {
				t.Errorf("-r rows after the mean time:\npgbench\n%s\npgarena\n%s", strings.Join(w, "\n"), strings.Join(g, "\n"))
			}
			if st[3].Retries == 0 || st[3].Failures == 0 {
				t.Errorf("command 3 (SELECT fail_once): %d failures, %d retries: want both", st[3].Failures, st[3].Retries)
			}
			if sum.Failed != st[3].Failures || sum.Retries != st[3].Retries {
				t.Errorf("summary: %d failed, %d retries; command 3: %d, %d", sum.Failed, sum.Retries, st[3].Failures, st[3].Retries)
			}
		})
	}
}

// TestScriptMixMatchesPgbench: two weighted scripts (-f a@3 -f b@1) with
// the same --random-seed run in the same order as under pgbench: with one
// client per -j thread, each client's sequence of scripts (and of draws)
// is pgbench's; with several clients per thread, the thread's sequence is
// shared in the order clients start transactions (as in pgbench), so the
// number of runs of each script is pgbench's.
func TestScriptMixMatchesPgbench(t *testing.T) {
	needPgbench(t)
	dsn := pgtest.DSN(t)
	admin := connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, admin, "create table mix (client int, script text, r int, seq bigserial)")
	files := []string{"testdata/mix_a.sql@3", "testdata/mix_b.sql@1"}
	const txs = 60
	for _, tc := range []struct {
		mode             string
		clients, threads int
		seed             uint64
		perClient        bool
		define           string // -D: default_seed given takes no seed from the base sequence
	}{
		{"simple", 1, 1, 3, true, ""},
		{"extended", 3, 3, 12345, true, ""},
		{"prepared", 2, 2, 77, true, ""},
		{"extended", 2, 2, 9, true, "default_seed=99"},
		{"simple", 4, 2, 5, false, ""},
	} {
		t.Run(fmt.Sprintf("%s-c%d-j%d%s", tc.mode, tc.clients, tc.threads, tc.define), func(t *testing.T) {
			query := "select row(client, script, r)::text from mix order by client, seq"
			if !tc.perClient {
				query = "select script || ' ' || count(*) from mix group by script order by script"
			}
			mustExec(t, admin, "truncate mix")
			args := []string{"-f", files[0], "-f", files[1]}
			if tc.define != "" {
				args = append(args, "-D", tc.define)
			}
			pgbench(t, dsn, append(args, "-n", "-t", fmt.Sprint(txs), "-c", fmt.Sprint(tc.clients),
				"-j", fmt.Sprint(tc.threads), "-M", tc.mode, "--random-seed", fmt.Sprint(tc.seed))...)
			want := rows(t, admin, query)
			mustExec(t, admin, "truncate mix")
			sum := runDriver(t, dsn, modes[tc.mode], args, tc.seed, tc.clients, tc.threads, txs, 1)
			if sum.Transactions != int64(txs*tc.clients) {
				t.Fatalf("pgarena committed %d of %d transactions (failed %d: %v)", sum.Transactions, txs*tc.clients, sum.Failed, sum.Errors)
			}
			got := rows(t, admin, query)
			sameRows(t, want, got)
			if a := rows(t, admin, "select count(*)::text from mix where script = 'b'"); a[0] == "0" {
				t.Error("script b never ran")
			}
		})
	}
}
