package target_test

// An external test package: pgtest imports target/local, which imports
// target.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
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
		cfg, err := target.ParseDSN(dsn, getenv)
		if err != nil {
			t.Fatalf("target.ParseDSN(%q): %v", dsn, err)
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatalf("target.ParseDSN(%q) with Main.Env PGHOST=%s: %v", dsn, getenv("PGHOST"), err)
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
		cfg, err := target.ParseDSN(dsn, getenv)
		if err != nil {
			t.Errorf("target.ParseDSN(%q): %v", dsn, err)
			continue
		}
		if got := fmt.Sprintf("%s %d %s %s", cfg.Host, cfg.Port, cfg.User, cfg.Database); got != want {
			t.Errorf("target.ParseDSN(%q) = %s, want %s", dsn, got, want)
		}
	}

	_, err := target.ParseDSN("port=notaport", lookup("PGPASSWORD=s3cret", "PGHOST=h"))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error with PGPASSWORD in the environment: %v", err)
	}
}
