package target

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestRedactDSN(t *testing.T) {
	cases := map[string]string{
		"postgres://bench:s3cret@db1:5432/bench?sslmode=disable": "postgres://bench:xxxxx@db1:5432/bench?sslmode=disable",
		"postgres://db1/bench?password=s3cret":                   "postgres://db1/bench?password=xxxxx",
		"host=db1 user=bench password=s3cret dbname=bench":       "host=db1 user=bench password=xxxxx dbname=bench",
		"host=db1 password='s3 cret' dbname=bench":               "host=db1 password=xxxxx dbname=bench",
		"host=db1 dbname=bench":                                  "host=db1 dbname=bench",
	}
	for in, want := range cases {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(RedactDSN(in), "s3") {
			t.Errorf("password leaked from %q", in)
		}
	}
}

func TestParseDSNNeverPrintsPassword(t *testing.T) {
	for _, dsn := range []string{
		"host=db1 port=notaport password=s3cret",
		"postgres://bench:s3cret@db1:notaport/bench",
	} {
		_, err := ParseDSN(dsn, nil)
		if err == nil {
			t.Fatalf("%q parsed", dsn)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("error leaks the password: %v", err)
		}
	}
}

func TestRedactedConfig(t *testing.T) {
	cfg, err := ParseDSN("postgres://bench:s3cret@db1:5433/bench?sslmode=disable&search_path=x", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := Redacted(cfg)
	if got != "host=db1 port=5433 user=bench dbname=bench search_path=x" {
		t.Fatalf("got %q", got)
	}
	if cfg.RuntimeParams["application_name"] != "pgarena" || cfg.ConnectTimeout == 0 {
		t.Fatalf("defaults not applied: %v %v", cfg.RuntimeParams, cfg.ConnectTimeout)
	}
}

func TestParseQueryMode(t *testing.T) {
	for s, want := range map[string]pgx.QueryExecMode{
		"simple": pgx.QueryExecModeSimpleProtocol, "extended": pgx.QueryExecModeExec, "prepared": pgx.QueryExecModeCacheStatement,
	} {
		if got, err := ParseQueryMode(s); err != nil || got != want {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	if _, err := ParseQueryMode("fast"); err == nil {
		t.Error("unknown mode accepted")
	}
}

// TestDropUnusedCaches: only the cache the query mode uses keeps its
// capacity (pgx allocates a cache whose capacity is above zero).
func TestDropUnusedCaches(t *testing.T) {
	for mode, wantStmt := range map[pgx.QueryExecMode]int{
		pgx.QueryExecModeSimpleProtocol: 0,
		pgx.QueryExecModeExec:           0,
		pgx.QueryExecModeCacheStatement: ClientStatementCache,
	} {
		cfg, err := ParseDSN("host=/tmp dbname=x", nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = mode
		DropUnusedCaches(cfg)
		if cfg.StatementCacheCapacity != wantStmt || cfg.DescriptionCacheCapacity != 0 {
			t.Errorf("%v: statement cache %d, description cache %d; want %d, 0", mode, cfg.StatementCacheCapacity, cfg.DescriptionCacheCapacity, wantStmt)
		}
	}
}

// TestWaitReadyReportsProgress: waiting for a server that refuses
// connections (a port nobody listens on) reports what it waits for, how
// long so far, the deadline and the server's answer at least every 5 s.
func TestWaitReadyReportsProgress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg, err := ParseDSN(fmt.Sprintf("host=127.0.0.1 port=%d user=nobody dbname=x", port), nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var notes []string
	var at []time.Duration
	_, err = WaitReady(context.Background(), cfg, 7*time.Second, func(s string) {
		notes = append(notes, s)
		at = append(at, time.Since(start))
	})
	if !IsConnectError(err) || !strings.Contains(err.Error(), "connect_refused") {
		t.Fatalf("error %v", err)
	}
	t.Logf("%q at %v", notes, at)
	if len(notes) < 2 {
		t.Fatalf("%d progress lines in 7 s: %q", len(notes), notes)
	}
	prev := time.Duration(0)
	for i, n := range notes {
		if at[i]-prev > 5500*time.Millisecond {
			t.Errorf("%q came %s after the previous line", n, at[i]-prev)
		}
		prev = at[i]
		want := fmt.Sprintf("waiting for host=127.0.0.1 port=%d user=nobody dbname=x to accept connections: ", port)
		if !strings.HasPrefix(n, want) || !strings.Contains(n, "so far, deadline 7s (--wait-ready); connect_refused: ") {
			t.Errorf("progress line %q", n)
		}
	}
}
