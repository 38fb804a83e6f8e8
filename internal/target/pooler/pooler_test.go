package pooler_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/pooler"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func provider(t *testing.T, kind, mode string, pool int) *pooler.Provider {
	t.Helper()
	cfg, err := target.ParseDSN(pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pooler.New(&target.DSN{Config: cfg}, pooler.Options{Kind: kind, Mode: mode, PoolSize: pool,
		MaxClients: 8, Env: os.Environ(), Notef: t.Logf})
	if err != nil {
		if os.Getenv(pgtest.RequireEnv) != "1" && strings.HasPrefix(err.Error(), "install ") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return p
}

// TestEachKind: every pooler starts in front of a real server, passes
// queries in the client's database, exposes its statistics, and leaves no
// process or file behind at teardown.
func TestEachKind(t *testing.T) {
	for _, c := range []struct{ kind, mode string }{{"pgbouncer", "transaction"}, {"pgbouncer", "session"},
		{"haproxy", ""}, {"pgpool", ""}} {
		t.Run(c.kind+":"+c.mode, func(t *testing.T) {
			p := provider(t, c.kind, c.mode, 2)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tg, down, err := p.Provision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			dir := tg.Config.Host
			if tg.Server == nil || tg.Pooler == nil || tg.Pooler.Kind != c.kind || tg.Pooler.Version == "" {
				t.Errorf("target: server %v pooler %+v", tg.Server, tg.Pooler)
			}
			if !strings.Contains(tg.Description, c.kind+" ") || !strings.Contains(tg.Description, " in front of ") {
				t.Errorf("description %q", tg.Description)
			}
			conn, err := tg.Connect(ctx, "test")
			if err != nil {
				down()
				t.Fatal(err)
			}
			var db, want string
			err = conn.QueryRow(ctx, "select current_database()", pgx.QueryExecModeSimpleProtocol).Scan(&db)
			conn.Close(ctx)
			want = tg.Server.Database
			if err != nil || db != want {
				t.Errorf("through %s: database %q, %v (want %q)", c.kind, db, err, want)
			}
			if tg.Admin != nil {
				ac, err := pgx.ConnectConfig(ctx, tg.Admin)
				if err != nil {
					t.Errorf("admin: %v", err)
				} else {
					q := "SHOW POOLS"
					if c.kind == "pgpool" {
						q = "SHOW POOL_PROCESSES"
					}
					if _, err := ac.Exec(ctx, q); err != nil {
						t.Errorf("%s: %v", q, err)
					}
					ac.Close(ctx)
				}
			}
			pids := groupPids(t, tg)
			down()
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("pooler directory %s left behind (%v)", dir, err)
			}
			for _, pid := range pids {
				if syscall.Kill(pid, 0) == nil {
					t.Errorf("process %d left behind", pid)
				}
			}
		})
	}
}

// groupPids lists the processes whose working directory is the pooler's.
func groupPids(t *testing.T, tg *target.Target) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && cwd == tg.Config.Host {
			out = append(out, pid)
		}
	}
	if len(out) == 0 {
		t.Errorf("no pooler process found in %s", tg.Config.Host)
	}
	return out
}

type pgxConnConfig = pgx.ConnConfig

func itoa(n int) string { return fmt.Sprint(n) }
