// Package pgtest gives tests a real PostgreSQL: one ephemeral cluster per
// test binary, started lazily from the installed server binaries, and a
// fresh, empty database per test.
//
// A package using it calls Main from TestMain, so that the cluster is
// stopped and removed when the tests end:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and each test asks for a database:
//
//	conn, err := pgx.Connect(ctx, pgtest.DSN(t))
//
// Pooler tests put a real pgbouncer in front of a cluster with
// StartBouncer. Citus tests get a database on a coordinator with two
// workers from CitusDSN (skipped where Citus is not installed, failed
// where PGARENA_REQUIRE_CITUS=1).
//
// The shared cluster trades durability for speed (fsync, synchronous_commit
// and full_page_writes off): it is for correctness tests, never for
// measurements. When the server binaries are missing, tests skip with a
// clear message, or fail when PGARENA_REQUIRE_PG=1 (CI). A test binary
// killed before Main could clean up (a -timeout panic) leaves its cluster
// behind; the next test binary to start a cluster removes it
// (local.RemoveStale).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/target/local"
)

const (
	// RequireEnv makes missing server binaries a failure instead of a skip.
	RequireEnv = "PGARENA_REQUIRE_PG"

	maxConnections = 300
	adminTimeout   = 60 * time.Second
)

// shared is the one cluster of this test binary.
var shared struct {
	once    sync.Once
	mu      sync.Mutex
	cluster *local.Cluster
	err     error
}

// dbSeq makes database names unique within the binary.
var dbSeq atomic.Int64

// testSettings are the server settings of test clusters.
func testSettings() map[string]string {
	return map[string]string{
		"fsync":              "off",
		"synchronous_commit": "off",
		"full_page_writes":   "off",
		"shared_buffers":     "128MB",
	}
}

// Main runs the tests, then stops and removes the shared cluster if one was
// started. Use it as os.Exit(pgtest.Main(m)) in TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	c := shared.cluster
	shared.cluster = nil
	shared.mu.Unlock()
	if c != nil {
		if err := c.Remove(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: removing the test cluster in %s: %v\n", c.DataDir(), err)
			if code == 0 {
				code = 1
			}
		}
	}
	sharedCitus.mu.Lock()
	cc := sharedCitus.c
	sharedCitus.c = nil
	sharedCitus.mu.Unlock()
	if cc != nil {
		if err := cc.remove(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: removing the Citus test cluster: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Cluster returns the shared cluster of this test binary, starting it on
// first use (for tests that need its port or binaries, e.g. to run pgbench).
// Tests must not stop it; use NewCluster for that.
func Cluster(t testing.TB) *local.Cluster {
	t.Helper()
	shared.once.Do(func() {
		var notes []string
		notef := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
		if removed, err := local.RemoveStale(os.Environ()); err != nil {
			notef("removing stale test clusters: %v", err)
		} else if len(removed) > 0 {
			notef("removed stale test clusters %s", strings.Join(removed, ", "))
		}
		c, err := start(notef, nil)
		shared.mu.Lock()
		shared.cluster, shared.err = c, err
		shared.mu.Unlock()
		for _, n := range notes {
			t.Logf("pgtest: %s", n)
		}
	})
	shared.mu.Lock()
	c, err := shared.cluster, shared.err
	shared.mu.Unlock()
	if err != nil {
		skipOrFail(t, err)
	}
	if c == nil {
		t.Fatal("pgtest: the shared cluster was removed (Main has returned)")
	}
	return c
}

// NewCluster starts a private cluster with the test settings overlaid with
// settings, for tests that stop or kill the server. It is removed in
// t.Cleanup.
func NewCluster(t testing.TB, settings map[string]string) *local.Cluster {
	t.Helper()
	c, err := start(func(format string, args ...any) { t.Logf("pgtest: "+format, args...) }, settings)
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Errorf("pgtest: removing cluster: %v", err)
		}
	})
	return c
}

func start(notef func(string, ...any), extra map[string]string) (*local.Cluster, error) {
	settings := testSettings()
	for k, v := range extra {
		settings[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return local.Start(ctx, local.Options{
		Env:            os.Environ(), // a test helper may read its own environment
		Settings:       settings,
		MinConnections: maxConnections,
		Notef:          notef,
	})
}

// Required reports whether tests must fail, not skip, when PostgreSQL or
// what they need beside it (pgbench, contrib extensions) is missing: in CI
// (PGARENA_REQUIRE_PG=1).
func Required() bool { return os.Getenv(RequireEnv) == "1" }

func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, local.ErrNoBinaries) && !Required() {
		t.Skipf("pgtest: skipping, this test needs PostgreSQL (set %s=1 to fail instead): %v", RequireEnv, err)
	}
	t.Fatalf("pgtest: %v", err)
}

// DSN returns a libpq keyword/value DSN to a fresh, empty database created
// for this test on the shared cluster, dropped (WITH (FORCE)) in t.Cleanup.
func DSN(t testing.TB) string {
	t.Helper()
	c := Cluster(t)
	name := dbName(t.Name(), dbSeq.Add(1))
	ident := pgx.Identifier{name}.Sanitize()
	if err := admin(c, "CREATE DATABASE "+ident+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		start := time.Now()
		if err := dropDatabase(c, name); err != nil {
			t.Errorf("pgtest: dropping database %s (%s): %v", name, time.Since(start).Round(time.Second), err)
		} else if took := time.Since(start); took > 10*time.Second {
			t.Logf("pgtest: dropping database %s took %s", name, took.Round(time.Second))
		}
	})
	return c.DSN(name)
}

// dropTimeout bounds dropping a test's database. DROP DATABASE makes the
// server checkpoint and waits for it (PostgreSQL 15's dropdb:
// RequestCheckpoint with CHECKPOINT_WAIT), then for every process of the
// cluster to close the database's files (a ProcSignalBarrier): with every
// running test's writes in shared buffers, on a loaded host, that can take
// longer than adminTimeout.
const dropTimeout = 3 * time.Minute

// dropDatabase drops database name WITH (FORCE) (its sessions are
// terminated). Its error lists what the cluster's processes were waiting
// for then, and the sessions still in that database.
func dropDatabase(c *local.Cluster, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	if err != nil {
		return fmt.Errorf("%w; %s", err, waiting(c, name))
	}
	return nil
}

// waiting describes the processes of c that wait for something, or are in
// database name, one "pid type [database] wait_event (state: query)" each.
func waiting(c *local.Cluster, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return "pg_stat_activity: " + err.Error()
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `select format('%s %s [%s] %s:%s (%s: %s)', pid, backend_type, datname, wait_event_type, wait_event, state, left(query, 60))
		from pg_stat_activity
		where pid <> pg_backend_pid() and (datname = $1 or wait_event_type in ('Lock', 'IPC', 'IO', 'Client'))`, name)
	if err != nil {
		return "pg_stat_activity: " + err.Error()
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "pg_stat_activity: " + err.Error()
	}
	return fmt.Sprintf("processes waiting or in the database: %d: %s", len(lines), strings.Join(lines, "; "))
}

// admin runs one statement in the postgres database.
func admin(c *local.Cluster, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// dbName derives a database name from a test name: lower case, [a-z0-9_]
// only, short enough for PostgreSQL's 63-byte identifiers, made unique by
// seq.
func dbName(testName string, seq int64) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	base := strings.Trim(b.String(), "_")
	suffix := fmt.Sprintf("_%d", seq)
	const maxLen = 63 - len("t_")
	if len(base) > maxLen-len(suffix) {
		base = base[:maxLen-len(suffix)]
	}
	return "t_" + base + suffix
}

// Connect opens a connection to dsn with the given query mode, closed when
// the test ends.
func Connect(t testing.TB, dsn string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
