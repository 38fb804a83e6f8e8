package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoBinaries is wrapped by every error that means "no usable PostgreSQL
// server binaries": callers (pgtest) skip instead of failing on it.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries found")

// BinEnv names the environment variable that stands for --pg-bin when
// that is not given: the lane of `make test` for another PostgreSQL version
// sets it, and so may a user with several installations.
const BinEnv = "PGARENA_PG_BIN"

// probeTimeout bounds each `postgres --version` and `pg_config --bindir`.
const probeTimeout = 10 * time.Second

// Binaries locates a PostgreSQL server installation.
type Binaries struct {
	Dir     string // directory holding initdb, pg_ctl and postgres
	Version string // e.g. "15.18"
	Major   int    // e.g. 15 (9 for 9.6)
}

// Path returns the path of a program in the installation, e.g. "pgbench".
func (b Binaries) Path(program string) string { return filepath.Join(b.Dir, program) }

// FindBinaries locates the PostgreSQL server binaries. When override is not
// empty it must be a directory holding initdb, pg_ctl and postgres; an empty
// override stands for $PGARENA_PG_BIN (BinEnv) of env when that is set. Otherwise
// it searches, in order, the directories on PATH, `pg_config --bindir`,
// /usr/lib/postgresql/*/bin, /usr/local/pgsql/bin and /usr/pgsql-*/bin, and
// picks the highest major version found (the first found among equals).
// Every "nothing usable" error wraps ErrNoBinaries and says how to fix it.
// PATH comes from env, which also gives `postgres --version` and pg_config
// their environment.
func FindBinaries(override string, env Env) (Binaries, error) {
	hint := "pass --pg-bin the directory holding initdb, pg_ctl and postgres (see `pg_config --bindir`)"
	if override == "" && env.Get(BinEnv) != "" {
		override = env.Get(BinEnv)
		hint = "set " + BinEnv + " to the directory holding initdb, pg_ctl and postgres (see `pg_config --bindir`), or unset it"
	}
	if override != "" {
		dir, err := filepath.Abs(override)
		if err != nil {
			return Binaries{}, fmt.Errorf("%w in %q: %v", ErrNoBinaries, override, err)
		}
		fi, err := os.Stat(dir)
		if err != nil {
			return Binaries{}, fmt.Errorf("%w in %s: the directory does not exist; %s", ErrNoBinaries, dir, hint)
		}
		if !fi.IsDir() {
			return Binaries{}, fmt.Errorf("%w in %s: not a directory; %s", ErrNoBinaries, dir, hint)
		}
		if missing := missingPrograms(dir); len(missing) > 0 {
			return Binaries{}, fmt.Errorf("%w in %s: %s missing; %s", ErrNoBinaries, dir, strings.Join(missing, ", "), hint)
		}
		return probe(dir, env)
	}

	var best Binaries
	var probeErrs []string
	for _, dir := range candidateDirs(env) {
		if len(missingPrograms(dir)) > 0 {
			continue
		}
		b, err := probe(dir, env)
		if err != nil {
			probeErrs = append(probeErrs, err.Error())
			continue
		}
		if best.Dir == "" || b.Major > best.Major {
			best = b
		}
	}
	if best.Dir != "" {
		return best, nil
	}
	unusable := ""
	if len(probeErrs) > 0 {
		unusable = "; unusable: " + strings.Join(probeErrs, "; ")
	}
	return Binaries{}, fmt.Errorf("%w (looked in PATH, pg_config --bindir, /usr/lib/postgresql/*/bin, /usr/local/pgsql/bin, /usr/pgsql-*/bin): install them with `apt-get install postgresql`, pass --pg-bin DIR, or use --dsn to benchmark an existing server%s", ErrNoBinaries, unusable)
}

// candidateDirs lists the directories to search, in order, without duplicates.
func candidateDirs(env Env) []string {
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		if d == "" || !filepath.IsAbs(d) {
			return
		}
		d = filepath.Clean(d)
		key := d
		if r, err := filepath.EvalSymlinks(d); err == nil {
			key = r
		}
		if !seen[key] {
			seen[key] = true
			dirs = append(dirs, d)
		}
	}
	for _, d := range filepath.SplitList(env.Get("PATH")) {
		add(d)
	}
	if pgc, ok := env.lookPath("pg_config"); ok {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		cmd := exec.CommandContext(ctx, pgc, "--bindir")
		cmd.Env = env.child()
		out, err := cmd.Output()
		cancel()
		if err == nil {
			add(strings.TrimSpace(string(out)))
		}
	}
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin", "/usr/pgsql-*/bin"} {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			add(m)
		}
	}
	return dirs
}

// missingPrograms returns the server programs not present (as executable
// files) in dir.
func missingPrograms(dir string) []string {
	var missing []string
	for _, p := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	return missing
}

// probe runs `postgres --version` in dir. When dir holds symlinks (say
// /usr/local/bin/postgres -> /usr/lib/postgresql/15/bin/postgres) and the
// real directory is a complete installation, that directory is used, so
// that companions such as pgbench are found next to postgres.
func probe(dir string, env Env) (Binaries, error) {
	if real, err := filepath.EvalSymlinks(filepath.Join(dir, "postgres")); err == nil {
		if rd := filepath.Dir(real); rd != dir && len(missingPrograms(rd)) == 0 {
			dir = rd
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "postgres"), "--version")
	cmd.Env = env.child()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return Binaries{}, fmt.Errorf("%w in %s: `postgres --version` failed: %v: %s", ErrNoBinaries, dir, err, strings.TrimSpace(string(out)))
	}
	version, major, err := parseVersion(string(out))
	if err != nil {
		return Binaries{}, fmt.Errorf("%w in %s: %v", ErrNoBinaries, dir, err)
	}
	return Binaries{Dir: dir, Version: version, Major: major}, nil
}

// parseVersion reads the output of `postgres --version`, e.g.
// "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" -> "15.18", 15.
func parseVersion(out string) (string, int, error) {
	const tag = "(PostgreSQL)"
	i := strings.Index(out, tag)
	if i < 0 {
		return "", 0, fmt.Errorf("unrecognised `postgres --version` output %q", strings.TrimSpace(out))
	}
	fields := strings.Fields(out[i+len(tag):])
	if len(fields) == 0 {
		return "", 0, fmt.Errorf("unrecognised `postgres --version` output %q", strings.TrimSpace(out))
	}
	version := fields[0]
	end := 0
	for end < len(version) && version[end] >= '0' && version[end] <= '9' {
		end++
	}
	major, err := strconv.Atoi(version[:end])
	if err != nil {
		return "", 0, fmt.Errorf("unrecognised PostgreSQL version %q", version)
	}
	return version, major, nil
}
