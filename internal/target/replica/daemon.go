package replica

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// startDaemon starts a replication system's daemon (slon, pgqd, a londiste
// worker) in a process group of its own that dies with pgarena, its output
// in logPath; env nil: pgarena's environment.
func startDaemon(env []string, logPath, prog string, args ...string) (*exec.Cmd, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(prog, args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = f, f, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", prog, err)
	}
	return cmd, nil
}

// stopDaemon stops a daemon's process group: SIGTERM, and SIGKILL after
// 10 s.
func stopDaemon(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}
