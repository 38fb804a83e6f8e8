package pooler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/await"
)

// process is a running pooler: its own process group, so that stopping it
// also ends the children it forked (pgpool).
type process struct {
	cmd    *exec.Cmd
	stop   syscall.Signal
	out    string // its stdout and stderr, in its directory
	exited chan struct{}
	err    error // set when exited is closed
}

func startProcess(bin string, args []string, dir string, acct *runAs, stop syscall.Signal) (*process, error) {
	outPath := filepath.Join(dir, "output.log")
	out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "HOME=" + dir}
	cmd.Stdout, cmd.Stderr = out, out
	// The pooler dies with pgarena, even by kill -9 (dieWithParent);
	// RemoveStale cleans up its directory at the next run.
	attr := &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(attr, stop)
	if acct != nil {
		attr.Credential = &syscall.Credential{Uid: acct.uid, Gid: acct.gid}
	}
	cmd.SysProcAttr = attr
	p := &process{cmd: cmd, stop: stop, out: outPath, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal comes when the thread that started the
		// pooler ends: this one, locked, lives until the pooler exits.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// waitReady waits until a query passes through the pooler (o.ReadyTimeout
// at most), or it exits, reporting progress with its last answer.
func (p *process) waitReady(ctx context.Context, client *pgx.ConnConfig, o Options) error {
	timeout := o.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	w := await.Wait{What: o.Kind + " to pass a query to the server", Timeout: timeout, Flag: "--pooler-ready-timeout", Notef: o.Notef}
	return w.Poll(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := ping(qctx, client)
		cancel()
		if err == nil {
			return true, "", nil
		}
		select {
		case <-p.exited:
			return false, "", fmt.Errorf("%s exited at start (%v): %s", o.Kind, p.err, p.tail())
		default:
		}
		status := err.Error()
		if out := p.lastLine(); out != "" {
			status += "; its last output: " + out
		}
		return false, status, nil
	})
}

// ping runs select 1 through cfg with the simple protocol.
func ping(ctx context.Context, cfg *pgx.ConnConfig) error {
	c := cfg.Copy()
	c.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	c.RuntimeParams["application_name"] = "pgarena-pooler-check"
	conn, err := pgx.ConnectConfig(ctx, c)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil {
		return err
	}
	if one != 1 {
		return errors.New("select 1 did not return 1")
	}
	return nil
}

// stopWithin sends the stop signal, waits up to wait, then kills the
// process group; the group is killed in any case so that no child is left.
func (p *process) stopWithin(wait time.Duration) error {
	pgid := p.cmd.Process.Pid
	_ = p.cmd.Process.Signal(p.stop)
	var err error
	select {
	case <-p.exited:
	case <-time.After(wait):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			err = fmt.Errorf("pooler process %d did not exit after SIGKILL", pgid)
		}
	}
	// Children (pgpool's) that outlived their parent.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return err
}

// tail is the end of the pooler's output, on one line.
// lastLine is the last line the program wrote ("" when none).
func (p *process) lastLine() string {
	b, _ := os.ReadFile(p.out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func (p *process) tail() string {
	b, _ := os.ReadFile(p.out)
	s := strings.TrimSpace(string(b))
	if len(s) > 1500 {
		s = "..." + s[len(s)-1500:]
	}
	if s == "" {
		return "(nothing)"
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}
