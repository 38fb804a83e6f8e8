package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestBadInput: each bad input exits 2 with one line naming the problem and
// changes nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	conn := connect(t, dsn)

	cases := []struct {
		name string
		args []string // --results DIR is appended unless noResults
		want []string
	}{
		{"unknown flag", []string{"run", "tpcb", "--no-such-flag", "--dsn", dsn}, []string{"unknown flag: --no-such-flag"}},
		{"unknown shorthand", []string{"run", "tpcb", "-Z", "--dsn", dsn}, []string{"unknown shorthand flag: 'Z'"}},
		{"zero clients", []string{"run", "tpcb", "-c", "0", "--dsn", dsn}, []string{"clients must be at least 1"}},
		{"negative clients", []string{"run", "tpcb", "-c", "-3", "--dsn", dsn}, []string{"clients must be at least 1"}},
		{"zero scale", []string{"run", "tpcb", "-s", "0", "--dsn", dsn}, []string{"scale must be at least 1"}},
		{"time and transactions", []string{"run", "tpcb", "-T", "5", "-t", "5", "--dsn", dsn}, []string{"-T/--time or -t/--transactions, not both"}},
		{"bad duration", []string{"run", "tpcb", "-T", "soon", "--dsn", dsn}, []string{"not a duration"}},
		{"bad protocol", []string{"run", "tpcb", "-M", "telepathy", "--dsn", dsn}, []string{"unknown query mode"}},
		{"zero script weight", []string{"run", "tpcb", "-b", "select-only@0", "--dsn", dsn}, []string{"total script weight must not be zero"}},
		{"dsn does not parse", []string{"run", "tpcb", "--dsn", "host=x port=notaport"}, []string{"cannot parse connection string", "port"}},
		{"dsn and cluster", []string{"run", "tpcb", "--dsn", dsn, "--cluster", "dev"}, []string{"either --dsn or --cluster"}},
		{"not initialised", []string{"run", "tpcb", "-T", "1", "--dsn", dsn}, []string{"not initialised for tpcb", "pgarena init tpcb"}},
		{"pg-bin missing", []string{"run", "tpcb", "-T", "1", "--pg-bin", "/nonexistent"}, []string{"/nonexistent", "--dsn"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			r := pgarena(t, nil, append(c.args, "--results", results)...)
			wantUsage(t, r, c.want...)
			noRuns(t, results)
		})
	}

	t.Run("functions only without tables", func(t *testing.T) {
		wantUsage(t, pgarena(t, nil, "init", "tpcc", "--functions-only", "--dsn", dsn), "not initialised for tpcc", "pgarena init tpcc")
	})

	t.Run("init script", func(t *testing.T) {
		wantUsage(t, pgarena(t, nil, "init", "script", "--dsn", dsn), "script has no tables of its own")
	})

	// The workload name is checked before flags that only workloads have,
	// so the results directory comes from the environment here.
	t.Run("unknown workload", func(t *testing.T) {
		results := filepath.Join(t.TempDir(), "results")
		env := append(cleanEnv(), "PGARENA_RESULTS="+results)
		for _, verb := range []string{"run", "init", "check", "drop"} {
			r := pgarena(t, env, verb, "nosuch")
			wantUsage(t, r, `unknown workload "nosuch"`, "tpcb")
			wantUsage(t, pgarena(t, env, verb), verb+" needs a workload: ", "tpcb")
		}
		noRuns(t, results)
	})

	t.Run("init scale 0", func(t *testing.T) {
		wantUsage(t, pgarena(t, nil, "init", "tpcb", "-s", "0", "--dsn", dsn), "scale must be at least 1")
	})
	t.Run("init without target", func(t *testing.T) {
		wantUsage(t, pgarena(t, nil, "init", "tpcb"), "needs a target")
	})
	t.Run("check not initialised", func(t *testing.T) {
		wantUsage(t, pgarena(t, nil, "check", "tpcb", "--dsn", dsn), "pgarena init tpcb")
	})

	t.Run("results not writable", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "plain-file")
		if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := pgarena(t, nil, "run", "tpcb", "-T", "1", "--dsn", dsn, "--results", filepath.Join(file, "results"))
		wantUsage(t, r, "results directory", "not writable", "--results")
		// the embedded cluster is not started either
		r = pgarena(t, nil, "run", "tpcb", "-T", "1", "--results", filepath.Join(file, "results"))
		wantUsage(t, r, "not writable")
		if b, _ := os.ReadFile(file); string(b) != "x" {
			t.Errorf("the file was changed: %q", b)
		}
	})

	t.Run("host does not resolve", func(t *testing.T) {
		results := filepath.Join(t.TempDir(), "results")
		t0 := time.Now()
		r := pgarena(t, nil, "run", "tpcb", "-T", "1", "--dsn", "host=nosuchhost.invalid user=bench dbname=bench", "--results", results)
		if d := time.Since(t0); d > 15*time.Second {
			t.Errorf("an unresolvable host took %s to report", d)
		}
		wantUsage(t, r, "nosuchhost.invalid", "dns")
		noRuns(t, results)
	})

	t.Run("init over foreign table", func(t *testing.T) {
		fdsn := pgtest.DSN(t)
		fconn := connect(t, fdsn)
		exec(t, fconn, "create table pgbench_accounts (aid int, note text); insert into pgbench_accounts values (7, 'mine')")
		r := pgarena(t, nil, "init", "tpcb", "-s", "1", "--dsn", fdsn)
		wantUsage(t, r, "pgbench_accounts", "--force")
		if got := tables(t, fconn); !slices.Equal(got, []string{"pgbench_accounts"}) {
			t.Errorf("tables after a refused init: %v", got)
		}
		var n int
		var note string
		if err := fconn.QueryRow(t.Context(), "select count(*), max(note) from pgbench_accounts").Scan(&n, &note); err != nil || n != 1 || note != "mine" {
			t.Errorf("the foreign table was changed: %d rows, %q, %v", n, note, err)
		}
		// run --init refuses the same way.
		results := filepath.Join(t.TempDir(), "results")
		r = pgarena(t, nil, "run", "tpcb", "--init", "-T", "1", "--dsn", fdsn, "--results", results)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "pgbench_accounts") || !strings.Contains(r.stderr, "--force") {
			t.Errorf("run --init over a foreign table:\n%s", r)
		}
		if got := tables(t, fconn); !slices.Equal(got, []string{"pgbench_accounts"}) {
			t.Errorf("tables after a refused run --init: %v", got)
		}
	})

	// Nothing above created a table in the shared database.
	if got := tables(t, conn); len(got) != 0 {
		t.Errorf("bad input created tables: %v", got)
	}
}

// TestWrongPassword: an authentication failure is named as such, exits 2
// and never prints the password.
func TestWrongPassword(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t, nil)
	admin := connect(t, c.DSN("postgres"))
	exec(t, admin, "create role bench login password 'right-Pa55word'")
	hba := filepath.Join(c.DataDir(), "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	// First match wins: put the password rule before initdb's trust rules.
	// Rewriting in place keeps the file's owner (the server account).
	rule := "host all bench 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(hba, append([]byte(rule), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	exec(t, admin, "select pg_reload_conf()")

	// The rule is in force: the right password works, no password does not.
	port := c.Port()
	good := fmt.Sprintf("host=127.0.0.1 port=%d user=bench dbname=postgres password=right-Pa55word sslmode=disable", port)
	r := pgarena(t, nil, "check", "tpcb", "--dsn", good)
	wantUsage(t, r, "not initialised") // connected, then refused for want of tables

	const secret = "wr0ng-S3cret"
	for _, dsn := range []string{
		fmt.Sprintf("host=127.0.0.1 port=%d user=bench dbname=postgres password=%s sslmode=disable", port, secret),
		fmt.Sprintf("postgres://bench:%s@127.0.0.1:%d/postgres?sslmode=disable", secret, port),
	} {
		for _, verb := range []string{"run", "init"} {
			results := filepath.Join(t.TempDir(), "results")
			args := []string{verb, "tpcb", "--dsn", dsn}
			if verb == "run" {
				args = append(args, "-T", "1", "--results", results)
			}
			r := pgarena(t, nil, args...)
			wantUsage(t, r, "auth", "password", "bench")
			if strings.Contains(r.stderr+r.stdout, secret) {
				t.Errorf("the password appears in the output:\n%s", r)
			}
			noRuns(t, results)
		}
	}
	if got := tables(t, admin); len(got) != 0 {
		t.Errorf("tables created: %v", got)
	}
}

// TestRefusedIsNotUsage: a server that refuses connections is not bad
// input (a wrong password or host name is): one line, exit 1.
func TestRefusedIsNotUsage(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	results := filepath.Join(t.TempDir(), "results")
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=bench dbname=bench connect_timeout=5", port)
	for _, args := range [][]string{{"run", "tpcb", "-T", "1", "--dsn", dsn, "--results", results}, {"check", "tpcb", "--dsn", dsn}} {
		r := pgarena(t, nil, args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != ExitFailed || len(lines) != 1 || !strings.Contains(r.stderr, "connect_refused") {
			t.Errorf("%v: want exit %d and one line naming connect_refused:\n%s", args[:2], ExitFailed, r)
		}
	}
	noRuns(t, results)
}

// TestVersionFlagAndVerbFlags: --version works like the version command; each
// verb's help lists only the workload flags that apply to it; a flag's
// value is named NAME, not taken from a quoted command.
func TestVersionFlagAndVerbFlags(t *testing.T) {
	t.Parallel()
	v := pgarena(t, nil, "--version")
	if v.code != 0 || v.stdout != "pgarena "+Version+"\n" {
		t.Errorf("--version:\n%s", v)
	}
	help := func(args ...string) string {
		r := pgarena(t, nil, append(args, "--help")...)
		if r.code != 0 {
			t.Fatalf("%v --help:\n%s", args, r)
		}
		return r.stdout
	}
	for _, c := range []struct {
		args       []string
		has, hasNo []string
	}{
		{[]string{"init", "tpcb"}, []string{"--scale", "--fillfactor", "--partitions", "--unlogged"}, []string{"--select-only", "--skip-some-updates", "--builtin"}},
		{[]string{"run", "tpcb"}, []string{"--scale", "--fillfactor", "--select-only", "--builtin"}, nil},
		{[]string{"check", "tpcb"}, []string{"--skip-some-updates", "--builtin"}, []string{"--scale", "--fillfactor", "--partitions"}},
		{[]string{"drop", "tpcb"}, nil, []string{"--scale", "--builtin"}},
		{[]string{"check", "tpcc"}, nil, []string{"--warehouses", "--stored-procs", "--warehouse-range", "--keying-thinking", "--citus", "--functions-only"}},
		{[]string{"init", "tpcc"}, []string{"--warehouses", "--warehouse-range", "--citus", "--functions-only"}, []string{"--stored-procs", "--all-warehouses", "--keying-thinking"}},
		{[]string{"run", "tpcc"}, []string{"--warehouses", "--stored-procs", "--keying-thinking"}, []string{"--warehouse-range", "--functions-only"}},
	} {
		h := help(c.args...)
		for _, f := range c.has {
			if !strings.Contains(h, f+" ") {
				t.Errorf("%v --help lacks %s", c.args, f)
			}
		}
		for _, f := range c.hasNo {
			if strings.Contains(h, f+" ") {
				t.Errorf("%v --help lists %s, which does not apply to it", c.args, f)
			}
		}
	}
	if h := help("check", "tpcb"); !strings.Contains(h, "--cluster NAME ") || strings.Contains(h, "--cluster pgarena") {
		t.Errorf("--cluster's value name:\n%s", h)
	}
	// A flag of another verb is an unknown flag, exit 2.
	wantUsage(t, pgarena(t, nil, "init", "tpcb", "-S", "--dsn", "host=x"), "unknown shorthand flag: 'S'")
}
