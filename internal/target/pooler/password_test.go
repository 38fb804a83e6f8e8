package pooler_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/pooler"
)

// TestPassword: a server that wants a SCRAM password over TCP, named by a
// DSN with the password: every pooler logs in with it, and the password
// appears in nothing pgarena shows or records (description, settings).
func TestPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := local.Start(ctx, local.Options{Env: os.Environ(), Settings: map[string]string{"fsync": "off"}})
	if err != nil {
		if os.Getenv(pgtest.RequireEnv) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() { _ = c.Remove() })
	const pw = "S3cr3t-pw'x"
	admin, err := target.Connect(ctx, mustParse(t, c.DSN("postgres")), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `create role bench login password 'S3cr3t-pw''x'`); err != nil {
		t.Fatal(err)
	}
	hba := filepath.Join(c.DataDir(), "pg_hba.conf")
	if err := os.WriteFile(hba, []byte("local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "select pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	// The server has applied the new pg_hba.conf once it refuses bench
	// without the password over TCP.
	noPassword := mustParse(t, "host=127.0.0.1 port="+itoa(c.Port())+" user=bench dbname=postgres sslmode=disable")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		conn, err := target.Connect(ctx, noPassword, "test")
		if err != nil {
			break
		}
		conn.Close(ctx)
		if time.Now().After(deadline) {
			t.Fatal("pg_hba.conf not applied within 10 s of pg_reload_conf()")
		}
	}
	cfg := mustParse(t, "host=127.0.0.1 port="+itoa(c.Port())+" user=bench dbname=postgres sslmode=disable password='S3cr3t-pw\\'x'")
	if cfg.Password != pw {
		t.Fatalf("password parsed as %q", cfg.Password)
	}
	for _, kind := range []string{"pgbouncer", "haproxy", "pgpool"} {
		t.Run(kind, func(t *testing.T) {
			p, err := pooler.New(&target.DSN{Config: cfg}, pooler.Options{Kind: kind, MaxClients: 4, Env: os.Environ()})
			if err != nil {
				t.Fatal(err)
			}
			tg, down, err := p.Provision(ctx)
			if err != nil {
				if strings.Contains(err.Error(), pw) {
					t.Errorf("the error shows the password")
				}
				t.Fatal(err)
			}
			defer down()
			conn, err := tg.Connect(ctx, "test")
			if err != nil {
				t.Fatalf("through %s: %v", kind, err)
			}
			var user string
			if err := conn.QueryRow(ctx, "select current_user").Scan(&user); err != nil || user != "bench" {
				t.Errorf("current_user %q, %v", user, err)
			}
			conn.Close(ctx)
			shown, _ := json.Marshal(tg.Pooler)
			for _, s := range []string{tg.Description, p.Describe(), string(shown)} {
				if strings.Contains(s, "S3cr3t") {
					t.Errorf("the password shows in %s", s)
				}
			}
		})
	}
}

func mustParse(t *testing.T, dsn string) *pgxConnConfig {
	t.Helper()
	cfg, err := target.ParseDSN(dsn, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
