package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKeptClusterStopCommandWorks: --keep-cluster prints a command that
// stops the kept cluster as printed, also when pgarena runs as root (the
// server then runs as another account, and pg_ctl refuses root).
func TestKeptClusterStopCommandWorks(t *testing.T) {
	t.Parallel()
	bin := needBinaries(t)
	var n notes
	e := &Ephemeral{Bin: bin, Keep: true, Env: Env(os.Environ()), Getenv: func(string) string { return "" }, Notef: n.notef}
	tgt, teardown, err := e.Provision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data := tgt.DataDir
	t.Cleanup(func() {
		c := &Cluster{dataDir: data, bin: bin}
		_ = c.kill()
		os.RemoveAll(filepath.Dir(data))
	})
	teardown()
	var cmd string
	for _, l := range n.list {
		if _, c, ok := strings.Cut(l, "stop it with: "); ok {
			cmd = c
		}
	}
	if cmd == "" {
		t.Fatalf("no stop command in the notes: %q", n.list)
	}
	t.Logf("stop command: %s", cmd)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "/bin/sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("the server still runs after the stop command (postmaster.pid: %v)", err)
	}
}
