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
// its pooler (of kind childKind) in front of.
const (
	childDSN  = "PGARENA_TEST_POOLER_CHILD_DSN"
	childKind = "PGARENA_TEST_POOLER_CHILD_KIND"
)

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
	p, err := pooler.New(&target.DSN{Config: cfg}, pooler.Options{Kind: os.Getenv(childKind), PoolSize: 2, MaxClients: 2, Env: os.Environ()})
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
	// This process is the one killed by the test: it lives until then,
	// at most 2 minutes (the sleep is the life under test, not a wait).
	time.Sleep(2 * time.Minute)
}

// TestPoolerDiesWithPgarena: a pooler started by a pgarena process that is
// killed (kill -9) exits with it, children included (pgpool's); the
// directory it leaves (password file included) is removed when the next
// pooler is provisioned.
func TestPoolerDiesWithPgarena(t *testing.T) {
	for _, kind := range []string{"pgbouncer", "haproxy", "pgpool"} {
		t.Run(kind, func(t *testing.T) { testDiesWithPgarena(t, kind) })
	}
}

func testDiesWithPgarena(t *testing.T, kind string) {
	provider(t, kind, "", 2) // skips without the program
	tmp, err := os.MkdirTemp("", "pooler-stale-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755) // as root the pooler runs as postgres
	cmd := exec.Command(os.Args[0], "-test.run=^TestPoolerChild$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, childDSN+"="+pgtest.DSN(t), childKind+"="+kind)
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
	if procs := inDir(dir); len(procs) == 0 {
		t.Fatalf("no %s process runs in %s", kind, dir)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(inDir(dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := inDir(dir); len(left) > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
		t.Errorf("%s processes %v outlived their pgarena process by 10 s", kind, left)
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
	p, err := pooler.New(&target.DSN{Config: cfg}, pooler.Options{Kind: kind, PoolSize: 2, MaxClients: 2,
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

// inDir lists the live processes whose working directory is dir (a
// pooler's, and its children's).
func inDir(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && cwd == dir {
			if b, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(b), ") Z ") {
				out = append(out, pid)
			}
		}
	}
	return out
}
