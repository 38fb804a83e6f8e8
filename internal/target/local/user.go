package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serverAccount is the unprivileged account PostgreSQL runs as when pgarena
// runs as root. A nil *serverAccount means "run as ourselves".
type serverAccount struct {
	name     string
	uid, gid uint32
}

func (a *serverAccount) String() string {
	if a == nil {
		return "the current user"
	}
	return fmt.Sprintf("%s (uid %d)", a.name, a.uid)
}

// command builds an exec.Cmd for a PostgreSQL program that runs as the
// account, with a clean environment and a working directory every user can
// enter.
func (a *serverAccount) command(ctx context.Context, env Env, path string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env.child()
	cmd.Dir = "/"
	cmd.WaitDelay = 5 * time.Second
	if a != nil {
		// No supplementary groups: the server gets exactly uid/gid.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid}}
	}
	return cmd
}

// chown gives path to the account (no-op when running as ourselves).
func (a *serverAccount) chown(path string) error {
	if a == nil {
		return nil
	}
	if err := os.Lchown(path, int(a.uid), int(a.gid)); err != nil {
		return fmt.Errorf("giving %s to %s: %w", path, a, err)
	}
	return nil
}

// writeFile writes a file owned by the account.
func (a *serverAccount) writeFile(path string, data []byte, perm os.FileMode) error {
	if err := os.WriteFile(path, data, perm); err != nil {
		return err
	}
	return a.chown(path)
}

// serverAccountForNewCluster picks the account for a new cluster: nil when
// not root; else the postgres system user, else a pgarena system user
// (created with useradd if needed). created reports that useradd ran.
func serverAccountForNewCluster(ctx context.Context) (acct *serverAccount, created bool, err error) {
	if os.Geteuid() != 0 {
		return nil, false, nil
	}
	for _, name := range []string{"postgres", "pgarena"} {
		if a, err := lookupAccount(name); err == nil {
			return a, false, nil
		}
	}
	useradd, err := exec.LookPath("useradd")
	if err != nil {
		return nil, false, errors.New("pgarena runs as root but PostgreSQL refuses to, there is no postgres user and useradd is not available to create one: create a postgres system user, or run pgarena as an ordinary user")
	}
	args := []string{"--system", "--no-create-home", "--home-dir", "/nonexistent", "--user-group", "--comment", "pgarena PostgreSQL server"}
	for _, sh := range []string{"/usr/sbin/nologin", "/sbin/nologin"} {
		if _, err := os.Stat(sh); err == nil {
			args = append(args, "--shell", sh)
			break
		}
	}
	uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(uctx, useradd, append(args, "pgarena")...)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		// Another pgarena may have created it meanwhile.
		if a, lerr := lookupAccount("pgarena"); lerr == nil {
			return a, false, nil
		}
		return nil, false, fmt.Errorf("pgarena runs as root but PostgreSQL refuses to, and creating a pgarena system user failed: %v: %s", err, strings.TrimSpace(string(out)))
	}
	a, err := lookupAccount("pgarena")
	if err != nil {
		return nil, false, fmt.Errorf("created system user pgarena but cannot look it up: %w", err)
	}
	return a, true, nil
}

func lookupAccount(name string) (*serverAccount, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	if uid == 0 {
		return nil, fmt.Errorf("user %s is root", name)
	}
	return &serverAccount{name: u.Username, uid: uint32(uid), gid: uint32(gid)}, nil
}

// serverAccountOf returns the account that owns an existing data directory
// (nil when not root).
func serverAccountOf(dataDir string) (*serverAccount, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	fi, err := os.Stat(dataDir)
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, fmt.Errorf("cannot read the owner of %s", dataDir)
	}
	if st.Uid == 0 {
		return nil, fmt.Errorf("data directory %s is owned by root; PostgreSQL cannot run as root", dataDir)
	}
	name := strconv.FormatUint(uint64(st.Uid), 10)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	return &serverAccount{name: name, uid: st.Uid, gid: st.Gid}, nil
}

// checkReachable reports a clear error when the account cannot search every
// directory from / down to and including dir (PostgreSQL would fail later
// with a cryptic "permission denied"). It checks mode bits only.
func (a *serverAccount) checkReachable(dir string, hint string) error {
	if a == nil {
		return nil
	}
	dir = filepath.Clean(dir)
	var chain []string
	for d := dir; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		d := chain[i]
		fi, err := os.Stat(d)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // created later, by us, with search permission
			}
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		perm := fi.Mode().Perm()
		var can bool
		switch {
		case st.Uid == a.uid:
			can = perm&0o100 != 0
		case st.Gid == a.gid:
			can = perm&0o010 != 0
		default:
			can = perm&0o001 != 0
		}
		if !can {
			return fmt.Errorf("the PostgreSQL server runs as %s (pgarena runs as root) but cannot reach %s: %s has mode %04o; %s", a, dir, d, perm, hint)
		}
	}
	return nil
}
