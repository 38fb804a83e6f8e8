package session

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target/local"
)

// at is a fixed instant plus d.
func at(d time.Duration) time.Time { return time.Unix(1700000000, 250_000_000).Add(d) }

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestTxLogGoldenLines checks lines for fixed inputs against pgbench's
// formats, field by field.
func TestTxLogGoldenLines(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		cfg  TxLog
		evs  []driver.TxEvent
		want []string
	}{
		{"plain", TxLog{MaxTries: 1}, []driver.TxEvent{
			{Client: 0, Type: 0, Intended: at(0), Start: at(0), End: at(1234 * time.Microsecond)},
			{Client: 0, Type: 2, Intended: at(2 * time.Millisecond), Start: at(2 * time.Millisecond), End: at(3 * time.Millisecond), Class: pgerr.ClassSerialization},
		}, []string{
			"0 1 1234 0 1700000000 251234",
			"0 2 failed 2 1700000000 253000",
		}},
		{"rate, retries, detailed", TxLog{MaxTries: 3, Throttled: true, FailuresDetailed: true}, []driver.TxEvent{
			{Client: 1, Type: 0, Intended: at(0), Start: at(500 * time.Microsecond), End: at(2 * time.Millisecond), Retries: 2},
			{Client: 1, Type: 0, Intended: at(time.Second), Start: at(time.Second), End: at(time.Second), Skipped: true},
			{Client: 1, Type: 1, Intended: at(0), Start: at(0), End: at(time.Millisecond), Class: pgerr.ClassDeadlock, Retries: 2},
			{Client: 1, Type: 1, Intended: at(0), Start: at(0), End: at(time.Millisecond), Class: pgerr.ClassConstraint},
		}, []string{
			"1 1 2000 0 1700000000 252000 500 2",
			"1 2 skipped 0 1700000001 250000 0 0",
			"1 3 deadlock 1 1700000000 251000 0 2",
			"1 4 other 1 1700000000 251000 0 0",
		}},
		{"aggregated", TxLog{MaxTries: 1, AggregateInterval: time.Second}, []driver.TxEvent{
			{Client: 0, Intended: at(0), Start: at(0), End: at(1000 * time.Microsecond)},
			{Client: 1, Intended: at(0), Start: at(0), End: at(3000 * time.Microsecond)},
			{Client: 1, Intended: at(0), Start: at(0), End: at(3000 * time.Microsecond), Class: pgerr.ClassSerialization},
			// an empty second between, then a last partial interval
			{Client: 0, Intended: at(2 * time.Second), Start: at(2 * time.Second), End: at(2*time.Second + 2000*time.Microsecond)},
		}, []string{
			"1700000000 2 4000 10000000 1000 3000 0 0 0 0 0 0 0 0 0",
			"1700000001 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
			"1700000002 1 2000 4000000 2000 2000 0 0 0 0 0 0 0 0 0",
		}},
		{"aggregated, all columns", TxLog{MaxTries: 2, AggregateInterval: 5 * time.Second, Throttled: true, LatencyLimit: true, FailuresDetailed: true}, []driver.TxEvent{
			{Client: 0, Intended: at(0), Start: at(10 * time.Microsecond), End: at(100 * time.Microsecond), Retries: 1},
			{Client: 0, Intended: at(0), Start: at(30 * time.Microsecond), End: at(300 * time.Microsecond)},
			{Client: 0, Intended: at(0), Start: at(0), End: at(0), Skipped: true},
			{Client: 0, Intended: at(0), Start: at(0), End: at(time.Millisecond), Class: pgerr.ClassSerialization, Retries: 1},
			{Client: 0, Intended: at(0), Start: at(0), End: at(time.Millisecond), Class: pgerr.ClassDeadlock},
		}, []string{
			"1700000000 2 400 100000 100 300 40 1000 10 30 1 2 2 1 1",
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Prefix = filepath.Join(dir, "log"+strconv.Itoa(i))
			tc.cfg.PID, tc.cfg.Threads = 42, 1
			w, err := openTxLog(tc.cfg, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range tc.evs {
				w.ObserveTx(e)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := readLines(t, tc.cfg.Prefix+".42")
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestTxLogThreadsAndSampling checks pgbench's file names and dealing of
// clients to threads, concurrent clients, and --sampling-rate.
func TestTxLogThreadsAndSampling(t *testing.T) {
	dir := t.TempDir()
	cfg := TxLog{Prefix: filepath.Join(dir, "pgbench_log"), PID: 7, Threads: 2, MaxTries: 1, SamplingRate: 0.1, Seed: 3}
	paths := cfg.Paths(5)
	if want := []string{cfg.Prefix + ".7", cfg.Prefix + ".7.1"}; strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	if n := len((&TxLog{Threads: 8}).Paths(3)); n != 3 {
		t.Errorf("8 threads for 3 clients: %d files, want 3 (as pgbench, threads <= clients)", n)
	}
	if p := (&TxLog{PID: 9}).Paths(1); p[0] != "pgbench_log.9" {
		t.Errorf("default name %q, want pgbench_log.9", p[0])
	}
	w, err := openTxLog(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	const perClient = 4000
	var wg sync.WaitGroup
	for c := range 5 {
		wg.Go(func() {
			for i := range perClient {
				d := time.Duration(i) * time.Microsecond
				w.ObserveTx(driver.TxEvent{Client: c, Intended: at(d), Start: at(d), End: at(d + 100*time.Microsecond)})
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// pgbench deals 5 clients to 2 threads as 3 + 2.
	byFile := [][]string{{"0", "1", "2"}, {"3", "4"}}
	total := 0
	for i, p := range paths {
		lines := readLines(t, p)
		total += len(lines)
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) != 6 {
				t.Fatalf("%s: %q has %d fields, want 6", p, l, len(f))
			}
			if !strings.Contains(strings.Join(byFile[i], " "), f[0]) {
				t.Fatalf("%s holds client %s; want clients %v", p, f[0], byFile[i])
			}
			if n, _ := strconv.Atoi(f[1]); n < 1 || n > perClient {
				t.Fatalf("transaction_no %s out of 1..%d", f[1], perClient)
			}
		}
	}
	if want := 5 * perClient / 10; total < want*8/10 || total > want*12/10 {
		t.Errorf("sampling 0.1 of %d transactions logged %d lines, want about %d", 5*perClient, total, want)
	}
}

// TestTxLogSums runs tpcb with -l (per transaction) and with
// --aggregate-interval and checks the files against the summary.
func TestTxLogSums(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := provider(t)
	// The third run is interrupted: the logs still hold every transaction
	// the summary counts.
	for i, agg := range []time.Duration{0, time.Second, 0} {
		w := tpcbWorkload(t, "tpcb-like")
		l := &TxLog{Prefix: filepath.Join(dir, "log"+strconv.Itoa(i)), PID: 1, Threads: 2, AggregateInterval: agg, MaxTries: 1}
		var verbose []string
		spec := Spec{Groups: []Group{{Workload: w, Clients: 3, QueryMode: "simple"}}, Duration: 1500 * time.Millisecond,
			Tick: 250 * time.Millisecond, Seed: 1, Init: i == 0, LoadWorkers: 2, TxLog: l,
			Hooks: Hooks{VerboseError: func(s string) { verbose = append(verbose, s) }}}
		runCtx, cancel := context.WithCancel(ctx)
		var outs []Output
		if i == 2 {
			// Interrupted once transactions are flowing.
			spec.Duration = time.Minute
			outs = append(outs, cancelAfterWork{cancel})
		}
		res, err := Run(runCtx, spec, p, st, outs...)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		sum := res.Summary
		if i == 2 && (!res.Stopped || sum.Transactions == 0) {
			t.Errorf("interrupted run: stopped %v, %d transactions", res.Stopped, sum.Transactions)
		}
		run, err := st.Load(res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := run.Spec.Load["pgbench_logs"], l.Prefix+".1 "+l.Prefix+".1.1"; got != want {
			t.Errorf("run spec records logs %q, want %q", got, want)
		}
		var lines, committed, failed int64
		var sumLat float64
		for _, path := range l.Paths(3) {
			for _, line := range readLines(t, path) {
				f := strings.Fields(line)
				lines++
				if agg == 0 {
					if len(f) != 6 {
						t.Fatalf("%q: %d fields, want 6", line, len(f))
					}
					if f[2] == "failed" {
						failed++
					} else {
						committed++
					}
					continue
				}
				if len(f) != 15 {
					t.Fatalf("%q: %d fields, want 15", line, len(f))
				}
				n, _ := strconv.ParseInt(f[1], 10, 64)
				committed += n
				v, _ := strconv.ParseFloat(f[2], 64)
				sumLat += v
			}
		}
		if committed != sum.Transactions || failed != sum.Failed {
			t.Errorf("agg %s: logs hold %d committed, %d failed; summary %d, %d", agg, committed, failed, sum.Transactions, sum.Failed)
		}
		if agg > 0 {
			if mean := sumLat / float64(committed) / 1000; sum.Latency.Avg > 0 && (mean < sum.Latency.Avg*0.95 || mean > sum.Latency.Avg*1.05) {
				t.Errorf("aggregated mean latency %.3f ms, summary %.3f ms", mean, sum.Latency.Avg)
			}
			if lines < 2 {
				t.Errorf("%d aggregated lines for 1.5 s at 1 s", lines)
			}
		}
		if len(verbose) != 0 {
			t.Errorf("verbose errors without failures: %v", verbose)
		}
	}
}

// TestVerboseErrorsLimit prints failures with their text, at most
// verboseErrorsPerSecond a second, and counts the rest.
func TestVerboseErrorsLimit(t *testing.T) {
	var lines []string
	v := &verboseErrors{print: func(s string) { lines = append(lines, s) }, txNames: []string{"tpcb-like"}, maxTries: 3}
	err := &pgconn.PgError{Severity: "ERROR", Code: "40001", Message: "could not serialize access due to concurrent update"}
	for i := range verboseErrorsPerSecond + 5 {
		v.ObserveTx(driver.TxEvent{Client: i, End: at(0), Class: pgerr.ClassSerialization, Err: err, Retries: 2})
	}
	v.ObserveTx(driver.TxEvent{Client: 1, End: at(0)}) // a commit: nothing
	v.ObserveTx(driver.TxEvent{Client: 1, End: at(time.Second), Class: pgerr.ClassOther, Err: errors.New("boom")})
	v.finish()
	if len(lines) != verboseErrorsPerSecond+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), verboseErrorsPerSecond+1, strings.Join(lines, "\n"))
	}
	if want := "client 0: tpcb-like failed (serialization, try 3/3): ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)"; lines[0] != want {
		t.Errorf("line %q\nwant %q", lines[0], want)
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "boom") || !strings.Contains(last, "5 more failures not shown") {
		t.Errorf("last line %q: want the next second's failure and the 5 left out", last)
	}
}

// TestTxLogFieldsMatchPgbench runs the installed pgbench with -l (per
// transaction, with -R and --max-tries 2) and with --aggregate-interval=1
// against the test cluster, and checks that pgarena's lines for the same
// options have as many fields as pgbench's.
func TestTxLogFieldsMatchPgbench(t *testing.T) {
	dsn := pgtest.DSN(t)
	bins, err := local.FindBinaries("", local.Env(os.Environ()))
	if err != nil {
		t.Skipf("no PostgreSQL binaries: %v", err)
	}
	pgbench := bins.Path("pgbench")
	if _, err := os.Stat(pgbench); err != nil {
		if os.Getenv(pgtest.RequireEnv) != "" {
			t.Fatalf("pgbench not installed beside the server: %v", err)
		}
		t.Skip("pgbench not installed")
	}
	dir := t.TempDir()
	pgb := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, pgbench, append(args, dsn)...).CombinedOutput()
		if err != nil {
			t.Fatalf("pgbench %v: %v\n%s", args, err, out)
		}
	}
	pgb("-i", "-s", "1", "-q")
	cases := []struct {
		name string
		args []string
		cfg  TxLog
		ev   driver.TxEvent
	}{
		{"per transaction", []string{"-c", "2", "-t", "20"}, TxLog{MaxTries: 1},
			driver.TxEvent{Intended: at(0), Start: at(0), End: at(time.Millisecond)}},
		{"per transaction, -R, --max-tries", []string{"-c", "2", "-t", "20", "-R", "500", "--max-tries=2"}, TxLog{MaxTries: 2, Throttled: true},
			driver.TxEvent{Intended: at(0), Start: at(0), End: at(time.Millisecond)}},
		{"aggregated", []string{"-c", "2", "-T", "2", "--aggregate-interval=1", "--failures-detailed"}, TxLog{MaxTries: 1, AggregateInterval: time.Second, FailuresDetailed: true},
			driver.TxEvent{Intended: at(0), Start: at(0), End: at(time.Millisecond)}},
	}
	for i, tc := range cases {
		prefix := filepath.Join(dir, "pgbench"+strconv.Itoa(i))
		pgb(append([]string{"-n", "-l", "--log-prefix=" + prefix}, tc.args...)...)
		matches, _ := filepath.Glob(prefix + ".*")
		if len(matches) != 1 {
			t.Fatalf("%s: pgbench wrote %v, want one file", tc.name, matches)
		}
		theirs := readLines(t, matches[0])
		if len(theirs) == 0 {
			t.Fatalf("%s: pgbench's log is empty", tc.name)
		}
		tc.cfg.Prefix, tc.cfg.PID, tc.cfg.Threads = filepath.Join(dir, "ours"+strconv.Itoa(i)), 1, 1
		w, err := openTxLog(tc.cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		w.ObserveTx(tc.ev)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		ours := readLines(t, tc.cfg.Prefix+".1")
		for _, l := range theirs {
			if got, want := len(strings.Fields(ours[0])), len(strings.Fields(l)); got != want {
				t.Errorf("%s: our line %q has %d fields, pgbench's %q has %d", tc.name, ours[0], got, l, want)
			}
		}
	}
}

// TestTxLogNoAllocations: logging a transaction allocates nothing, per
// transaction or aggregated (the hot path is measured against pgbench).
func TestTxLogNoAllocations(t *testing.T) {
	for _, agg := range []time.Duration{0, time.Second} {
		w, err := openTxLog(TxLog{Prefix: filepath.Join(t.TempDir(), "x"), Threads: 1, MaxTries: 2, Throttled: true, AggregateInterval: agg}, 1)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		allocs := testing.AllocsPerRun(10000, func() {
			i++
			d := time.Duration(i) * time.Millisecond
			w.ObserveTx(driver.TxEvent{Intended: at(d), Start: at(d), End: at(d + time.Millisecond), Retries: 1})
		})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if allocs != 0 {
			t.Errorf("aggregate %s: %.1f allocations per transaction, want 0", agg, allocs)
		}
	}
}

// cancelAfterWork is an output that cancels the run (as Ctrl-C does) at
// the first interval with a committed transaction.
type cancelAfterWork struct{ cancel context.CancelFunc }

func (c cancelAfterWork) Write(r Record) error {
	if r.Interval != nil {
		for _, tx := range r.Interval.Tx {
			if tx.Count > 0 {
				c.cancel()
			}
		}
	}
	return nil
}
