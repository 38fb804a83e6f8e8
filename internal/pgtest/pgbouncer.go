package pgtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/target/local"
)

// Bouncer is a real pgbouncer started for one test, in front of a cluster.
type Bouncer struct {
	port   int
	dbname string
	user   string
	log    string
}

// DSN returns a libpq keyword/value DSN to the database through the
// pooler, over TCP.
func (b *Bouncer) DSN() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", b.port, b.user, b.dbname)
}

// Log returns pgbouncer's log so far (for a failing test's message).
func (b *Bouncer) Log() string {
	out, _ := os.ReadFile(b.log)
	return string(out)
}

// StartBouncer starts pgbouncer on a free port in front of database dbname
// of cluster c, with pool_mode mode ("session", "transaction") and at
// most poolSize server connections, and stops it in t.Cleanup. As root it
// runs as the account that owns the cluster's data directory (pgbouncer
// refuses to run as root). pgbouncer missing is a skip, or a failure with
// PGARENA_REQUIRE_PG=1 (scripts/install-deps.sh installs it).
func StartBouncer(t testing.TB, c *local.Cluster, dbname, mode string, poolSize int) *Bouncer {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer", "/usr/local/bin/pgbouncer"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		if os.Getenv(RequireEnv) != "1" {
			t.Skipf("pgtest: skipping, this test needs pgbouncer (set %s=1 to fail instead; scripts/install-deps.sh installs it)", RequireEnv)
		}
		t.Fatalf("pgtest: pgbouncer not found (scripts/install-deps.sh installs it)")
	}
	// The pooler's files live in a directory its account can reach.
	dir, err := os.MkdirTemp("", "pgarena-bouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		fi, err := os.Stat(c.DataDir())
		if err != nil {
			t.Fatal(err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid == 0 {
			t.Fatalf("pgtest: cannot find an account other than root to run pgbouncer as")
		}
		cred = &syscall.Credential{Uid: st.Uid, Gid: st.Gid}
		if err := os.Chown(dir, int(st.Uid), int(st.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	user := local.Superuser
	port, err := freeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	b := &Bouncer{port: port, dbname: dbname, user: user, log: filepath.Join(dir, "pgbouncer.log")}
	ini := fmt.Sprintf(`[databases]
%s = host=127.0.0.1 port=%d dbname=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = %s
default_pool_size = %d
max_client_conn = 200
logfile = %s
pidfile = %s
admin_users = %s
ignore_startup_parameters = extra_float_digits
`, dbname, c.Port(), dbname, port, filepath.Join(dir, "users.txt"), mode, poolSize, b.log,
		filepath.Join(dir, "pgbouncer.pid"), user)
	for name, data := range map[string]string{"pgbouncer.ini": ini, "users.txt": strconv.Quote(user) + ` ""` + "\n"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if cred != nil {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) } // pgbouncer's immediate shutdown
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("pgtest: starting pgbouncer: %v", err)
	}
	var early strings.Builder
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if early.Len() < 4096 {
				early.WriteString(sc.Text() + "\n")
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("pgtest: pgbouncer did not stop")
		}
	})
	// Ready when a query passes through it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		qctx, qcancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := pingThrough(qctx, b.DSN())
		qcancel()
		if err == nil {
			return b
		}
		select {
		case werr := <-exited:
			t.Fatalf("pgtest: pgbouncer exited (%v):\n%s%s", werr, early.String(), b.Log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: pgbouncer on port %d did not answer within 20 s: %v\n%s", port, err, b.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pingThrough(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil {
		return err
	}
	if one != 1 {
		return errors.New("select 1 did not return 1")
	}
	return nil
}

func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
