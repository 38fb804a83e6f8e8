package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/target/local"
)

// RequireCitusEnv makes a missing Citus extension a failure instead of a
// skip (scripts/install-citus.sh builds and installs it).
const RequireCitusEnv = "PGARENA_REQUIRE_CITUS"

// CitusWorkers is the number of workers of the test Citus cluster.
const CitusWorkers = 2

// Citus is a Citus cluster of this test binary: a coordinator and
// CitusWorkers workers, each a local cluster with citus preloaded, all on
// 127.0.0.1. Tests get a fresh database with CitusDSN; they must not stop
// its servers.
type Citus struct {
	Coordinator *local.Cluster
	Workers     []*local.Cluster
	// Version is the installed Citus version (citus.control's
	// default_version), e.g. "13.2-1".
	Version string
}

var sharedCitus struct {
	once sync.Once
	mu   sync.Mutex
	c    *Citus
	err  error
}

// errNoCitus is returned where the citus extension is not installed.
var errNoCitus = errors.New("the citus extension is not installed (build it with scripts/install-citus.sh)")

// citusSettings are the Citus nodes' settings over the test settings:
// citus preloaded, prepared transactions for Citus's two-phase commit of
// multi-node writes, and node connections without TLS (the test clusters
// have none; libpq would otherwise look for client certificates in a
// home directory the server's account may not read).
func citusSettings() map[string]string {
	return map[string]string{
		"shared_preload_libraries":  "citus",
		"citus.node_conninfo":       "sslmode=disable",
		"max_prepared_transactions": "100",
		"shared_buffers":            "64MB",
	}
}

// CitusCluster returns the Citus cluster of this test binary, starting it
// on first use. Where Citus is not installed the test skips with one line,
// or fails when PGARENA_REQUIRE_CITUS=1.
func CitusCluster(t testing.TB) *Citus {
	t.Helper()
	sharedCitus.once.Do(func() {
		c, err := startCitus(func(format string, args ...any) { t.Logf("pgtest: "+format, args...) })
		sharedCitus.mu.Lock()
		sharedCitus.c, sharedCitus.err = c, err
		sharedCitus.mu.Unlock()
	})
	sharedCitus.mu.Lock()
	c, err := sharedCitus.c, sharedCitus.err
	sharedCitus.mu.Unlock()
	if err != nil {
		if (errors.Is(err, errNoCitus) || errors.Is(err, local.ErrNoBinaries)) && os.Getenv(RequireCitusEnv) != "1" {
			t.Skipf("pgtest: skipping, this test needs Citus (set %s=1 to fail instead): %v", RequireCitusEnv, err)
		}
		t.Fatalf("pgtest: citus: %v", err)
	}
	if c == nil {
		t.Fatal("pgtest: the Citus cluster was removed (Main has returned)")
	}
	return c
}

// citusVersion returns the default_version of the installed citus
// extension, or errNoCitus.
func citusVersion() (string, error) {
	bin, err := local.FindBinaries("", local.Env(os.Environ()))
	if err != nil {
		return "", err
	}
	share := ""
	if out, err := exec.Command(bin.Path("pg_config"), "--sharedir").Output(); err == nil {
		share = strings.TrimSpace(string(out))
	}
	b, err := os.ReadFile(filepath.Join(share, "extension", "citus.control"))
	if err != nil {
		return "", errNoCitus
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "default_version" {
			return strings.Trim(strings.TrimSpace(v), "'"), nil
		}
	}
	return "", fmt.Errorf("%s has no default_version", filepath.Join(share, "extension", "citus.control"))
}

func startCitus(notef func(string, ...any)) (c *Citus, err error) {
	version, err := citusVersion()
	if err != nil {
		return nil, err
	}
	c = &Citus{Version: version}
	defer func() {
		if err != nil {
			c.remove()
			c = nil
		}
	}()
	for i := 0; i <= CitusWorkers; i++ {
		n, err := start(notef, citusSettings())
		if err != nil {
			return c, err
		}
		if i == 0 {
			c.Coordinator = n
		} else {
			c.Workers = append(c.Workers, n)
		}
	}
	return c, nil
}

// nodes are the coordinator, then the workers.
func (c *Citus) nodes() []*local.Cluster {
	var out []*local.Cluster
	if c.Coordinator != nil {
		out = append(out, c.Coordinator)
	}
	return append(out, c.Workers...)
}

func (c *Citus) remove() error {
	var errs []error
	for _, n := range c.nodes() {
		if err := n.Remove(); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", n.DataDir(), err))
		}
	}
	return errors.Join(errs...)
}

// CitusDSN returns a DSN to a fresh database on the test Citus cluster's
// coordinator: the database exists on every node with the citus extension,
// and the workers are added to the coordinator's metadata
// (citus_set_coordinator_host, citus_add_node), so distributed tables get
// their shards on the workers. It is dropped on every node in t.Cleanup.
func CitusDSN(t testing.TB) string {
	t.Helper()
	return citusDSN(t, CitusCluster(t), true)
}

// CitusDSNNoWorkers is CitusDSN without citus_add_node: a coordinator with
// 0 workers, every shard on the coordinator.
func CitusDSNNoWorkers(t testing.TB) string {
	t.Helper()
	return citusDSN(t, CitusCluster(t), false)
}

// CitusWorkerDSN returns a DSN to the database of dsn (from CitusDSN) on
// worker i.
func CitusWorkerDSN(t testing.TB, dsn string, i int) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return CitusCluster(t).Workers[i].TCPDSN(cfg.Database)
}

func citusDSN(t testing.TB, c *Citus, addWorkers bool) string {
	t.Helper()
	name := dbName(t.Name(), dbSeq.Add(1))
	ident := pgx.Identifier{name}.Sanitize()
	for _, n := range c.nodes() {
		n := n
		if err := admin(n, "CREATE DATABASE "+ident+" TEMPLATE template0"); err != nil {
			t.Fatalf("pgtest: creating database %s on %s: %v", name, n.DataDir(), err)
		}
		t.Cleanup(func() {
			if err := admin(n, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
				t.Errorf("pgtest: dropping database %s: %v", name, err)
			}
		})
	}
	// workers first: citus_add_node needs the extension there
	for _, w := range c.Workers {
		if err := runIn(w.DSN(name), "CREATE EXTENSION citus"); err != nil {
			t.Fatalf("pgtest: create extension citus on a worker: %v", err)
		}
	}
	stmts := []string{
		"CREATE EXTENSION citus",
		"SELECT citus_set_coordinator_host('127.0.0.1', " + strconv.Itoa(c.Coordinator.Port()) + ")",
	}
	if addWorkers {
		for _, w := range c.Workers {
			stmts = append(stmts, "SELECT citus_add_node('127.0.0.1', "+strconv.Itoa(w.Port())+")")
		}
	}
	dsn := c.Coordinator.TCPDSN(name)
	if err := runIn(dsn, stmts...); err != nil {
		t.Fatalf("pgtest: set up citus in %s: %v", name, err)
	}
	return dsn
}

// runIn runs statements in order on one connection to dsn.
func runIn(dsn string, stmts ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}
