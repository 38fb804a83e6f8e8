package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/pgarena/pgarena/internal/metrics"
)

// writeFileAtomic replaces dir/name with data: a temporary file in dir is
// written, fsynced and renamed over name, then dir is fsynced. A reader sees
// the old file or the new one, never a part.
func writeFileAtomic(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = f.Chmod(filePerm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

// writeJSONAtomic writes v as indented JSON (for humans) with writeFileAtomic.
// A json.Marshaler (RunSpec, ServerInfo, Summary: written by hand) is
// indented by metrics.AppendIndent, as json.MarshalIndent would.
func writeJSONAtomic(dir, name string, v any) error {
	var b []byte
	var err error
	if m, ok := v.(json.Marshaler); ok {
		if b, err = m.MarshalJSON(); err == nil {
			b = metrics.AppendIndent(make([]byte, 0, len(b)*3/2), b)
		}
	} else {
		b, err = json.MarshalIndent(v, "", "  ")
	}
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	b = append(b, '\n')
	if err := writeFileAtomic(dir, name, b); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// syncDir fsyncs a directory so that entries created or renamed in it are
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// readJSON decodes the JSON file path into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// lockExclusive opens (creating) path and takes an exclusive flock on it
// without waiting. The lock lives as long as the returned file is open; the
// descriptor is close-on-exec, so child processes do not inherit it.
func lockExclusive(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, err
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// lockHeld reports whether some open file description holds an exclusive
// flock on path: the run's writer is alive. It probes with a shared lock, so
// readers never see each other. A missing lock file means no writer.
func lockHeld(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	defer f.Close()
	err = flock(f, unix.LOCK_SH|unix.LOCK_NB)
	switch {
	case err == nil:
		return false, nil // released when f closes
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	default:
		return false, fmt.Errorf("probe lock %s: %w", path, err)
	}
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// ErrDiskFull is wrapped by the errors of Create, Open and the Writer's
// methods when the results directory's filesystem has no room left
// (ENOSPC, or EDQUOT: the user's quota). A run that meets it while going
// should end as interrupted: every interval appended before is whole and
// readable.
var ErrDiskFull = errors.New("results directory is full")

// diskFullError is the one-line error of a write that found no room. It
// wraps ErrDiskFull and the cause.
type diskFullError struct {
	dir string // the results directory
	op  string // what failed, e.g. "append interval 12 to RUN/intervals.jsonl"
	err error
}

func (e *diskFullError) Error() string {
	cause := e.err.Error()
	var pe *fs.PathError
	if errors.As(e.err, &pe) {
		cause = pe.Err.Error()
	}
	return fmt.Sprintf("results directory %q is full: %s: %s (free space there or use --results DIR or %s)", e.dir, e.op, cause, EnvResults)
}

func (e *diskFullError) Unwrap() []error { return []error{ErrDiskFull, e.err} }

// isNoSpace reports whether err says the filesystem (or the user's quota)
// is full.
func isNoSpace(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)
}

// noSpace wraps err as a diskFullError of the results directory dir when
// it is one (op says what was being written), and returns it as is
// otherwise.
func noSpace(dir, op string, err error) error {
	if err == nil || !isNoSpace(err) {
		return err
	}
	return &diskFullError{dir: dir, op: op, err: err}
}

// minFree is the room Open wants in the results directory: spec.json, a
// few intervals and the summary of a run.
const minFree = 64 << 10

// freeBytes returns the bytes available to this user in dir's filesystem.
func freeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}
