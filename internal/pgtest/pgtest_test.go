package pgtest

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestFreshDistinctDatabases(t *testing.T) {
	var mu sync.Mutex
	names := map[string]string{}
	t.Run("group", func(t *testing.T) {
		for _, sub := range []string{"first", "Second/With Odd-Chars"} {
			t.Run(sub, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				conn := connect(t, DSN(t))
				var db string
				var tables int
				if err := conn.QueryRow(ctx, "select current_database(), (select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public')").Scan(&db, &tables); err != nil {
					t.Fatal(err)
				}
				if tables != 0 {
					t.Errorf("database %s is not empty: %d relations in public", db, tables)
				}
				// Same table name in both tests: databases are separate.
				if _, err := conn.Exec(ctx, "create table accounts (id int primary key, balance bigint); insert into accounts values (1, 100)"); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				names[t.Name()] = db
				mu.Unlock()
			})
		}
	})
	if len(names) != 2 {
		t.Fatalf("databases: %v", names)
	}
	seen := map[string]bool{}
	for test, db := range names {
		if seen[db] || !strings.HasPrefix(db, "t_") {
			t.Errorf("test %s got database %s (all: %v)", test, db, names)
		}
		seen[db] = true
	}

	// Their cleanups dropped them.
	conn := connect(t, Cluster(t).DSN("postgres"))
	for _, db := range names {
		var n int
		if err := conn.QueryRow(context.Background(), "select count(*) from pg_database where datname = $1", db).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("database %s not dropped after its test", db)
		}
	}
}

func TestSharedClusterSettings(t *testing.T) {
	conn := connect(t, DSN(t))
	for setting, want := range map[string]string{"fsync": "off", "max_connections": "300", "full_page_writes": "off"} {
		var got string
		if err := conn.QueryRow(context.Background(), "show "+setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", setting, got, want)
		}
	}
}

func TestNewClusterCanBeStopped(t *testing.T) {
	c := NewCluster(t, map[string]string{"work_mem": "5MB"})
	conn := connect(t, c.DSN("postgres"))
	var wm string
	if err := conn.QueryRow(context.Background(), "show work_mem").Scan(&wm); err != nil || wm != "5MB" {
		t.Fatalf("work_mem = %q, %v", wm, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.Ping(context.Background()); err == nil {
		t.Error("connection still works after Stop")
	}
	if Cluster(t) == c {
		t.Error("NewCluster returned the shared cluster")
	}
}

func TestDBName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		seq  int64
		want string
	}{
		{"TestX/Sub Case", 3, "t_testx_sub_case_3"},
		{"Ünïcode", 1, "t_n_code_1"},
	} {
		if got := dbName(tc.in, tc.seq); got != tc.want {
			t.Errorf("dbName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := dbName(strings.Repeat("x", 200), 123456); len(got) > 63 || !strings.HasSuffix(got, "_123456") {
		t.Errorf("long name -> %q (%d bytes)", got, len(got))
	}
}

// TestDropFailureSaysWhatWaits: when dropping a test's database fails, the
// error names the sessions still in it and what they wait for.
func TestDropFailureSaysWhatWaits(t *testing.T) {
	dsn := DSN(t)
	conn := Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	name := conn.Config().Database
	got := waiting(Cluster(t), name)
	if !strings.Contains(got, "client backend ["+name+"] Client:ClientRead (idle: ") {
		t.Errorf("waiting: %s", got)
	}
}
