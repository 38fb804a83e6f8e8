package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	outputs "github.com/pgarena/pgarena/internal/output/all"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target/local"
	workloads "github.com/pgarena/pgarena/internal/workload/all"
)

// cliMainEnv makes the test binary behave as pgarena (for tests that must
// run pgarena as a separate process, e.g. to SIGKILL it).
const cliMainEnv = "PGARENA_CLI_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(cliMainEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Main{Stdout: os.Stdout, Stderr: os.Stderr, Env: os.Environ()}.Run(ctx, os.Args[1:])
		stop()
		os.Exit(code)
	}
	workloads.Register()
	outputs.Register()
	os.Exit(pgtest.Main(m))
}

// result is what one pgarena invocation produced.
type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func (r result) String() string {
	return "exit " + strconv.Itoa(r.code) + " after " + r.elapsed.Round(time.Millisecond).String() +
		"\n--- stdout ---\n" + r.stdout + "--- stderr ---\n" + r.stderr
}

// cleanEnv is the process environment without anything that names a
// target or a results directory, so that tests decide those themselves;
// PGARENA_PG_BIN stays (the lane of `make test` for another PostgreSQL
// version sets it).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(k, "PG") && k != local.BinEnv) || k == cliMainEnv {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// pgarena runs the CLI in-process with env (cleanEnv() if nil); every call
// has a deadline so that a hang fails the test instead of the binary.
func pgarena(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return pgarenaCtx(t, context.Background(), env, args...)
}

var errHung = errors.New("pgarena did not finish within 2 minutes")

// pgarenaCtx is pgarena with a context the test may cancel (an interrupt).
func pgarenaCtx(t *testing.T, ctx context.Context, env []string, args ...string) result {
	t.Helper()
	if env == nil {
		env = cleanEnv()
	}
	ctx, cancel := context.WithTimeoutCause(ctx, 2*time.Minute, errHung)
	defer cancel()
	var out, errb bytes.Buffer
	t0 := time.Now()
	code := Main{Stdout: &out, Stderr: &errb, Env: env}.Run(ctx, args)
	r := result{code: code, stdout: out.String(), stderr: errb.String(), elapsed: time.Since(t0)}
	if context.Cause(ctx) == errHung {
		// Errorf, not Fatalf: this may run in a goroutine of the test.
		t.Errorf("pgarena %s did not finish within its deadline\n%s", strings.Join(args, " "), r)
	}
	return r
}

// mustRun runs pgarena and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := pgarena(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("pgarena %s:\n%s", strings.Join(args, " "), r)
	}
	return r
}

// wantUsage asserts bad input: exit 2, exactly one line on stderr starting
// "pgarena: " and containing every want, nothing on stdout.
func wantUsage(t *testing.T, r result, want ...string) {
	t.Helper()
	t.Logf("pgarena said: %s", strings.TrimSpace(r.stderr))
	if r.code != ExitUsage {
		t.Errorf("exit code %d, want %d\n%s", r.code, ExitUsage, r)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "pgarena: ") {
		t.Errorf("stderr should be exactly one line starting %q, got %d lines:\n%s", "pgarena: ", len(lines), r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not mention %q:\n%s", w, r.stderr)
		}
	}
	if r.stdout != "" {
		t.Errorf("nothing should be on stdout for bad input, got:\n%s", r.stdout)
	}
}

// noRuns asserts that the results directory holds no run (it may not exist:
// bad input is rejected before anything is recorded).
func noRuns(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("bad input left %s in the results directory", filepath.Join(dir, e.Name()))
	}
}

// summaryJSON decodes a summary printed with --json.
func summaryJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not a JSON summary: %v\n%s", err, s)
	}
	if dec.More() {
		t.Fatalf("stdout has more than one JSON value:\n%s", s)
	}
	return m
}

func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	v, ok := m[key]
	if !ok {
		t.Fatalf("summary has no %q field: %v", key, m)
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("summary field %q is %T, not a number", key, v)
	}
	return f
}

func str(t *testing.T, m map[string]any, key string) string {
	t.Helper()
	v, ok := m[key].(string)
	if !ok {
		t.Fatalf("summary field %q missing or not a string: %v", key, m[key])
	}
	return v
}

// connect opens a connection for checking the database from the test.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// tables lists the public tables of the database, sorted.
func tables(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := conn.Query(ctx, "select tablename::text from pg_tables where schemaname = 'public' order by 1")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func exec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
