package pooler_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/pooler"
)

// childDSN names the server a child test process (TestPoolerChild) starts
// its pgbouncer in front of.
const childDSN = "PGARENA_TEST_POOLER_CHILD_DSN"

// TestPoolerChild is pgarena's part in TestPoolerDiesWithPgarena, run in a
// child process: it starts a pgbouncer, prints its directory and waits to
// be killed.
func TestPoolerChild(t *testing.T) {
	dsn := os.Getenv(childDSN)
	if dsn == "" {
		t.Skip("run by TestPoolerDiesWithPgarena")
	}
	cfg, err := target.ParseDSN(dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pooler.New(&target.DSN{Config: cfg}, pooler.Options{Kind: "pgbouncer", PoolSize: 2, MaxClients: 2, Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tg, _, err := p.Provision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("POOLERDIR %s\n", tg.Config.Host)
	time.Sleep(2 * time.Minute)
}

// TestPoolerDiesWithPgarena: a pgbouncer started by a pgarena process that
// is killed (kill -9) exits with it; the directory it leaves (password
// file included) is removed when the next pooler is provisioned.
func TestPoolerDiesWithPgarena(t *testing.T) {
	provider(t, "pgbouncer", "", 2) // skips without pgbouncer
	tmp, err := os.MkdirTemp("", "pooler-stale-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755) // as root the pooler runs as postgres
	cmd := exec.Command(os.Args[0], "-test.run=^TestPoolerChild$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, childDSN+"="+pgtest.DSN(t))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "POOLERDIR "); ok {
			dir = d
			break
		}
		t.Logf("child: %s", sc.Text())
	}
	if dir == "" {
		cmd.Wait()
		t.Fatal("the child started no pooler")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	var owner, pid int
	var ownerStart, start uint64
	b, err := os.ReadFile(filepath.Join(dir, "pgarena-owner"))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := fmt.Sscan(string(b), &owner, &ownerStart, &pid, &start); n != 4 || owner != cmd.Process.Pid || local.ProcessStart(pid) != start {
		t.Fatalf("owner file %q: want the child %d and its live pooler", b, cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for local.ProcessStart(pid) == start && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if local.ProcessStart(pid) == start {
		syscall.Kill(-pid, syscall.SIGKILL)
		t.Errorf("pgbouncer %d outlived its pgarena process by 10 s", pid)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed process's pooler directory: %v", err)
	}
	// The next pooler provisioned with the same TMPDIR removes it.
	cfg, err := target.ParseDSN(pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	p, err := pooler.New(&target.DSN{Config: cfg}, pooler.Options{Kind: "pgbouncer", PoolSize: 2, MaxClients: 2,
		Env: append(os.Environ(), "TMPDIR="+tmp), Notef: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, down, err := p.Provision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	down()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("stale pooler directory %s not removed (%v); notes %q", dir, err, notes)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "removed poolers left by pgarena processes that were killed: "+dir) {
		t.Errorf("notes %q do not name the stale directory", notes)
	}
}
