package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// File names inside a run directory.
const (
	SpecFile       = "spec.json"
	ServerFile     = "server.json"
	IntervalsFile  = "intervals.jsonl"
	SummaryFile    = "summary.json"
	HistogramsFile = "histograms.hlog"
	LockFile       = "run.lock"
)

const (
	dirPerm  = 0o755
	filePerm = 0o644

	// DefaultDirName is the results directory used when neither --results
	// nor PGARENA_RESULTS is given.
	DefaultDirName = "./pgarena-results"
	// EnvResults names the environment variable holding the results directory.
	EnvResults = "PGARENA_RESULTS"
)

// ErrNotWritable is wrapped by the error Open returns when the results
// directory cannot be created or written.
var ErrNotWritable = errors.New("results directory is not writable")

// ErrNoRun is wrapped by the errors of Load and Resolve for a reference that
// names no run.
var ErrNoRun = errors.New("no such run")

// notWritableError is the one-line error of Open. It wraps both
// ErrNotWritable and the underlying cause.
type notWritableError struct {
	dir string
	err error
}

func (e *notWritableError) Error() string {
	reason := e.err.Error()
	var pe *fs.PathError
	if errors.As(e.err, &pe) {
		reason = pe.Err.Error() // the directory is already named
	}
	reason = strings.Join(strings.Fields(reason), " ")
	return fmt.Sprintf("results directory %q is not writable: %s (use --results DIR or %s)", e.dir, reason, EnvResults)
}

func (e *notWritableError) Unwrap() []error { return []error{ErrNotWritable, e.err} }

// Store is a results directory.
type Store struct {
	dir string
}

// DefaultDir returns $PGARENA_RESULTS if set, else "./pgarena-results".
// env looks up the caller's environment (the CLI's Main.Env); nil is an
// empty environment.
func DefaultDir(env func(string) string) string {
	if env == nil {
		return DefaultDirName
	}
	if d := env(EnvResults); d != "" {
		return d
	}
	return DefaultDirName
}

// Open opens the results directory dir, creating it (mode 0755) if missing,
// and checks that it is writable by creating and removing a temporary file.
// Failure gives a one-line error wrapping ErrNotWritable, or ErrDiskFull
// when its filesystem has less than 64 kB left.
func Open(dir string) (*Store, error) {
	if dir == "" {
		dir = DefaultDirName
	}
	if strings.Contains(dir, "://") { // never echoed: it may hold a password
		return nil, fmt.Errorf("%w: a results database is read with --results URL (list, show, compare, report, export, plan status, serve); runs are recorded in a directory and sent to a database with --out postgres=URL", ErrNotWritable)
	}
	fail := func(err error) (*Store, error) { return nil, &notWritableError{dir: dir, err: err} }
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return fail(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fail(err)
	}
	if !fi.IsDir() {
		return fail(errors.New("not a directory"))
	}
	f, err := os.CreateTemp(dir, ".pgarena-probe-*")
	if err != nil {
		if isNoSpace(err) {
			return nil, noSpace(dir, "create a file", err)
		}
		return fail(err)
	}
	name := f.Name()
	cerr := f.Close()
	rerr := os.Remove(name)
	if err := errors.Join(cerr, rerr); err != nil {
		return fail(err)
	}
	if free, err := freeBytes(dir); err == nil && free < minFree {
		return nil, &diskFullError{dir: dir, op: fmt.Sprintf("%d kB free, a run needs at least %d kB", free>>10, minFree>>10), err: unix.ENOSPC}
	}
	return &Store{dir: filepath.Clean(dir)}, nil
}

// OpenReadOnly opens an existing results directory for reading (list,
// show): it creates nothing and does not need write access. A directory
// that does not exist reads as empty.
func OpenReadOnly(dir string) *Store {
	if dir == "" {
		dir = DefaultDirName
	}
	return &Store{dir: filepath.Clean(dir)}
}

// Dir returns the results directory.
func (s *Store) Dir() string { return s.dir }

// runDir is the directory of run id.
func (s *Store) runDir(id string) string { return filepath.Join(s.dir, id) }
