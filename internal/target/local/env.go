package local

import (
	"os"
	"path/filepath"
	"strings"
)

// Env is the environment clusters are found and run in (KEY=VALUE, as
// os.Environ): the CLI passes its Main.Env, tests the process environment.
// nil is an empty environment. It gives PATH (where to find the server
// binaries and pg_config), TMPDIR (temporary clusters), PGARENA_HOME,
// XDG_DATA_HOME and HOME (named clusters), and, without PG* and locale
// variables, the environment of the server programs.
type Env []string

// Get returns the value of key ("" when unset); the last setting wins, as
// in os/exec.
func (e Env) Get(key string) string {
	prefix := key + "="
	for i := len(e) - 1; i >= 0; i-- {
		if strings.HasPrefix(e[i], prefix) {
			return e[i][len(prefix):]
		}
	}
	return ""
}

// tempDir is where temporary clusters and socket directories go: $TMPDIR,
// else /tmp (as os.TempDir on Unix).
func (e Env) tempDir() string {
	if d := e.Get("TMPDIR"); d != "" {
		return d
	}
	return "/tmp"
}

// lookPath finds an executable named file in the directories of $PATH.
func (e Env) lookPath(file string) (string, bool) {
	for _, d := range filepath.SplitList(e.Get("PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// child is the environment for PostgreSQL programs: e without PG*
// variables (PGDATA, PGPORT, PGOPTIONS... would override what we pass) and
// locale variables, with the C locale so that messages are stable English.
func (e Env) child() []string {
	var env []string
	for _, kv := range e {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "LC_") || k == "LANG" || k == "LANGUAGE" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C")
}
