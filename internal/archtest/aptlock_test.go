package archtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// aptCommand is apt-get run to change the system (not `command -v`, not
// apt-cache).
var aptCommand = regexp.MustCompile(`(?m)^[^#\n]*\bapt-get\s+(-\S+\s+)*(install|update|upgrade|dist-upgrade|remove)\b`)

// TestAptWaitsForLock: what make demo and make test run installs through
// apt_get (scripts/apt-lock.sh), which waits for apt's and dpkg's lock and
// says so, instead of failing when another apt (unattended-upgrades on a
// fresh machine) holds it. A program named dpkg (a copy of sleep) stands
// for the other package manager.
func TestAptWaitsForLock(t *testing.T) {
	root := repoRoot(t)
	for _, f := range []string{"Makefile", "scripts/install-deps.sh"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if m := aptCommand.FindString(string(b)); m != "" {
			t.Errorf("%s runs apt-get directly (%q): use apt_get from scripts/apt-lock.sh, which waits for the lock", f, strings.TrimSpace(m))
		}
	}
	lock, err := os.ReadFile(filepath.Join(root, "scripts/apt-lock.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lock), `apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT"`) {
		t.Error("apt_get does not pass apt its lock timeout (DPkg::Lock::Timeout)")
	}

	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	dpkg := filepath.Join(t.TempDir(), "dpkg")
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dpkg, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// The holder runs until the wait has said so (bounded), then exits: the
	// wait must return after it, never before, however slow /proc is to scan.
	holder := exec.Command(dpkg, "120")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	exited := make(chan time.Time, 1)
	go func() { holder.Wait(); exited <- time.Now() }()
	wait := exec.Command("bash", "-c", `. scripts/apt-lock.sh && apt_wait_lock 60`)
	wait.Dir = root
	stderr, err := wait.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stderr).ReadString('\n')
		said <- line
		io.Copy(io.Discard, stderr)
	}()
	want := fmt.Sprintf("install-deps: waiting for apt/dpkg lock, in use by dpkg (pid %d) (0s so far, up to 60s)", holder.Process.Pid)
	select {
	case line := <-said:
		if !strings.Contains(line, fmt.Sprintf("dpkg (pid %d)", holder.Process.Pid)) || !strings.HasPrefix(line, "install-deps: waiting for apt/dpkg lock, in use by ") {
			t.Errorf("said %q, want a line like %q", line, want)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("apt_wait_lock said nothing in 60 s while dpkg ran; want a line like %q", want)
	}
	returned := make(chan error, 1)
	go func() { returned <- wait.Wait() }()
	select {
	case err := <-returned:
		t.Fatalf("apt_wait_lock returned (%v) while the other package manager ran", err)
	case <-time.After(100 * time.Millisecond):
	}
	holder.Process.Kill()
	<-exited
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("apt_wait_lock: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("apt_wait_lock still waits 60 s after the other package manager exited")
	}
}
