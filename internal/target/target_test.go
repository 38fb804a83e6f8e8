package target

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func lookup(kvs ...string) func(string) string {
	return func(key string) string {
		v := ""
		for _, kv := range kvs {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		return v
	}
}

// TestParseDSNTakesPGFromEnv: PG* variables come from the environment the
// caller passes (the CLI's Main.Env), over the process environment, and
// what the DSN itself says wins over both.
func TestParseDSNTakesPGFromEnv(t *testing.T) {
	c := pgtest.Cluster(t)
	t.Setenv("PGHOST", "/nonexistent/pgarena-test") // the process points elsewhere
	t.Setenv("PGPORT", "1")
	getenv := lookup(c.Env()...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, dsn := range []string{"", "application_name=envtest", "postgres:///postgres", "postgresql://?sslmode=disable"} {
		cfg, err := ParseDSN(dsn, getenv)
		if err != nil {
			t.Fatalf("ParseDSN(%q): %v", dsn, err)
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatalf("ParseDSN(%q) with Main.Env PGHOST=%s: %v", dsn, getenv("PGHOST"), err)
		}
		var one int
		if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
			t.Errorf("select 1 = %d, %v", one, err)
		}
		conn.Close(ctx)
	}

	for dsn, want := range map[string]string{
		"dbname=other host=h port=5 user=u":          "h 5 u other",
		"postgres://u@h:5/other":                     "h 5 u other",
		"postgres://h/other?user=u&port=5":           "h 5 u other",
		"postgres:///other?host=h":                   "h " + getenv("PGPORT") + " pgarena other",
		"postgres://[::1]/other":                     "::1 " + getenv("PGPORT") + " pgarena other",
		"postgres://h1,h2/other?user=u":              "h1 5432 u other", // a host list has its own ports
		"user=u":                                     getenv("PGHOST") + " " + getenv("PGPORT") + " u postgres",
		"postgres://u:pw@" + "/x?application_name=a": getenv("PGHOST") + " " + getenv("PGPORT") + " u x",
	} {
		cfg, err := ParseDSN(dsn, getenv)
		if err != nil {
			t.Errorf("ParseDSN(%q): %v", dsn, err)
			continue
		}
		if got := fmt.Sprintf("%s %d %s %s", cfg.Host, cfg.Port, cfg.User, cfg.Database); got != want {
			t.Errorf("ParseDSN(%q) = %s, want %s", dsn, got, want)
		}
	}

	_, err := ParseDSN("port=notaport", lookup("PGPASSWORD=s3cret", "PGHOST=h"))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error with PGPASSWORD in the environment: %v", err)
	}
}

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
