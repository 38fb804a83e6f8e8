package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/pooler"
)

// Bouncer is a real pgbouncer started for one test, in front of a cluster
// (by internal/target/pooler, as `pgarena run --via pgbouncer` starts it).
type Bouncer struct {
	dsn, admin string
	dir        string
}

// DSN returns a libpq keyword/value DSN to the database through the
// pooler (its unix socket in a private directory).
func (b *Bouncer) DSN() string { return b.dsn }

// AdminDSN returns a DSN to the pooler's admin console (database
// pgbouncer, as the same user).
func (b *Bouncer) AdminDSN() string { return b.admin }

// Log returns pgbouncer's log so far. A failing test prints it at its end.
func (b *Bouncer) Log() string {
	out, _ := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	return string(out)
}

// StartBouncer starts pgbouncer in front of database dbname of cluster c,
// with pool_mode mode ("session", "transaction") and at most poolSize
// server connections, and stops it in t.Cleanup. As root it runs as the
// account that owns the cluster's data directory (pgbouncer refuses to run
// as root). pgbouncer missing is a skip, or a failure with
// PGARENA_REQUIRE_PG=1 (scripts/install-deps.sh installs it).
func StartBouncer(t testing.TB, c *local.Cluster, dbname, mode string, poolSize int) *Bouncer {
	t.Helper()
	cfg, err := target.ParseDSN(c.DSN(dbname), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	inner := &clusterDB{cfg: cfg, dataDir: c.DataDir()}
	p, err := pooler.New(inner, pooler.Options{Kind: "pgbouncer", Mode: mode, PoolSize: poolSize, MaxClients: 190,
		Env: os.Environ()})
	if err != nil {
		if strings.HasPrefix(err.Error(), "install ") && os.Getenv(RequireEnv) != "1" {
			t.Skipf("pgtest: skipping, this test needs pgbouncer (set %s=1 to fail instead; scripts/install-deps.sh installs it)", RequireEnv)
		}
		t.Fatalf("pgtest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tg, teardown, err := p.Provision(ctx)
	if err != nil {
		t.Fatalf("pgtest: starting pgbouncer: %v", err)
	}
	t.Cleanup(teardown)
	b := &Bouncer{dir: tg.Config.Host}
	t.Cleanup(func() { // runs before teardown, which removes the log
		if t.Failed() {
			t.Logf("--- pgbouncer log ---\n%s", b.Log())
		}
	})
	dsn := func(db string) string {
		return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", tg.Config.Host, tg.Config.Port,
			tg.Config.User, db)
	}
	b.dsn, b.admin = dsn(tg.Config.Database), dsn("pgbouncer")
	return b
}

// clusterDB is a database of a test cluster as a target provider, with its
// data directory (whose owner the pooler runs as).
type clusterDB struct {
	cfg     *pgx.ConnConfig
	dataDir string
}

func (d *clusterDB) Describe() string { return target.Redacted(d.cfg) }

func (d *clusterDB) Provision(context.Context) (*target.Target, func(), error) {
	return &target.Target{Config: d.cfg, Description: d.Describe(), Local: true, DataDir: d.dataDir}, func() {}, nil
}
