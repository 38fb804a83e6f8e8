package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// needBinaries skips (or, with PGARENA_REQUIRE_PG=1, fails) without server
// binaries.
func needBinaries(t *testing.T) Binaries {
	t.Helper()
	b, err := FindBinaries("", Env(os.Environ()))
	if err != nil {
		if os.Getenv("PGARENA_REQUIRE_PG") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return b
}

// reachableTempDir is t.TempDir made searchable by the server account
// (when the tests run as root, the server runs as postgres).
func reachableTempDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func show(t *testing.T, dsn, setting string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "show "+setting).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

type notes struct {
	mu   sync.Mutex
	list []string
}

func (n *notes) notef(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.list = append(n.list, fmt.Sprintf(format, args...))
}

func TestStartTempCluster(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	var n notes
	ctx := context.Background()
	c, err := Start(ctx, Options{
		Settings:       map[string]string{"work_mem": "7MB", "Shared_Buffers": "128MB"},
		MinConnections: 150,
		Notef:          n.notef,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove()
	root := filepath.Dir(c.DataDir())

	if !c.Running() {
		t.Fatal("Running() = false after Start")
	}
	if got := show(t, c.DSN("postgres"), "max_connections"); got != "150" {
		t.Errorf("max_connections = %s, want 150 (MinConnections)", got)
	}
	if got := show(t, c.TCPDSN("postgres"), "work_mem"); got != "7MB" {
		t.Errorf("work_mem = %s, want the override 7MB", got)
	}
	if got := show(t, c.DSN("postgres"), "shared_buffers"); got != "128MB" {
		t.Errorf("shared_buffers = %s, want the override 128MB", got)
	}
	if got := show(t, c.DSN("postgres"), "fsync"); got != "on" {
		t.Errorf("fsync = %s, want on", got)
	}
	if got := c.Settings()["port"]; got == "" || got != show(t, c.DSN("postgres"), "port") {
		t.Errorf("Settings()[port] = %q, server says otherwise", got)
	}
	env := strings.Join(c.Env(), "\n")
	for _, want := range []string{"PGHOST=" + c.SocketDir(), "PGUSER=pgarena", "PGDATABASE=postgres"} {
		if !strings.Contains(env, want) {
			t.Errorf("Env() = %q, missing %q", env, want)
		}
	}
	fi, err := os.Stat(c.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %04o, want 0700", fi.Mode().Perm())
	}
	if os.Geteuid() == 0 {
		if fi.Sys().(*syscall.Stat_t).Uid == 0 {
			t.Error("data dir owned by root")
		}
		t.Logf("notes: %q", n.list)
		if len(n.list) != 1 {
			t.Errorf("Notef called %d times as root, want once", len(n.list))
		}
	}
	if _, err := os.Stat(c.LogPath()); err != nil {
		t.Errorf("server log: %v", err)
	}

	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Running() {
		t.Fatal("Running() = true after Stop")
	}
	if err := c.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{c.DataDir(), root} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Remove (%v)", d, err)
		}
	}
}

func TestStartFailureShowsLog(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	_, err := Start(context.Background(), Options{Settings: map[string]string{"shared_buffers": "lots"}})
	if err == nil {
		t.Fatal("Start with a bad setting succeeded")
	}
	t.Logf("error (as expected):\n%v", err)
	if !strings.Contains(err.Error(), "shared_buffers") || !strings.Contains(err.Error(), "last lines of") {
		t.Errorf("error does not show the server log: %v", err)
	}
	if _, err := Start(context.Background(), Options{Settings: map[string]string{"port": "1"}}); err == nil {
		t.Error("overriding port was accepted")
	}
}

func TestFindBinaries(t *testing.T) {
	t.Parallel()
	bogus := t.TempDir()
	_, err := FindBinaries(bogus, nil)
	if err == nil || !errors.Is(err, ErrNoBinaries) || !strings.Contains(err.Error(), "initdb") || !strings.Contains(err.Error(), bogus) {
		t.Errorf("FindBinaries(empty dir) error = %v", err)
	}
	_, err = FindBinaries(filepath.Join(bogus, "does-not-exist"), nil)
	if !errors.Is(err, ErrNoBinaries) {
		t.Errorf("FindBinaries(missing dir) error = %v, want ErrNoBinaries", err)
	}

	b := needBinaries(t)
	if b.Major < 10 || b.Version == "" {
		t.Errorf("FindBinaries() = %+v", b)
	}
	again, err := FindBinaries(b.Dir, nil)
	if err != nil || again != b {
		t.Errorf("FindBinaries(%s) = %+v, %v; want %+v", b.Dir, again, err, b)
	}
	// PATH comes from the Env given, not from the process; the highest
	// version found wins (an installation in the usual directories may be
	// higher than the one under test in a version lane).
	onPath, err := FindBinaries("", Env{"PATH=" + b.Dir})
	if err != nil || onPath.Dir != b.Dir && onPath.Major <= b.Major {
		t.Errorf("FindBinaries(PATH=%s) = %+v, %v", b.Dir, onPath, err)
	}
	// PGARENA_PG_BIN stands for --pg-bin, and only when that is empty.
	if fromEnv, err := FindBinaries("", Env{"PATH=", BinEnv + "=" + b.Dir}); err != nil || fromEnv != b {
		t.Errorf("FindBinaries(%s=%s) = %+v, %v", BinEnv, b.Dir, fromEnv, err)
	}
	if _, err := FindBinaries("", Env{BinEnv + "=" + bogus}); !errors.Is(err, ErrNoBinaries) || !strings.Contains(err.Error(), BinEnv) {
		t.Errorf("FindBinaries(%s=empty dir) error = %v, want one naming %s", BinEnv, err, BinEnv)
	}
	if again, err := FindBinaries(b.Dir, Env{BinEnv + "=" + bogus}); err != nil || again != b {
		t.Errorf("--pg-bin does not win over %s: %+v, %v", BinEnv, again, err)
	}
}

func TestParseVersion(t *testing.T) {
	for out, want := range map[string]int{
		"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n": 15,
		"postgres (PostgreSQL) 17devel\n":                        17,
		"postgres (PostgreSQL) 9.6.24\n":                         9,
	} {
		if _, got, err := parseVersion(out); err != nil || got != want {
			t.Errorf("parseVersion(%q) = %d, %v; want %d", out, got, err, want)
		}
	}
	if _, _, err := parseVersion("bash: postgres: not found"); err == nil {
		t.Error("parseVersion accepted junk")
	}
}

func TestDefaults(t *testing.T) {
	d := Defaults(16<<30, 300)
	if d["shared_buffers"] != "4096MB" || d["effective_cache_size"] != "8192MB" || d["max_connections"] != "300" {
		t.Errorf("Defaults(16GB, 300) = %v", d)
	}
	d = Defaults(64<<30, 10)
	if d["shared_buffers"] != "8192MB" || d["max_connections"] != "100" {
		t.Errorf("Defaults(64GB, 10) = %v", d)
	}
	if _, ok := Defaults(0, 0)["shared_buffers"]; !ok {
		t.Error("Defaults with unknown memory has no shared_buffers")
	}
	for _, k := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		if _, ok := d[k]; ok {
			t.Errorf("Defaults sets %s; it must keep PostgreSQL's default", k)
		}
	}
}

func TestRenderConfQuotes(t *testing.T) {
	got := renderConf(map[string]string{"log_line_prefix": `%m [%p] 'x' \`})
	if !strings.Contains(got, `log_line_prefix = '%m [%p] ''x'' \\'`) {
		t.Errorf("renderConf = %q", got)
	}
	if _, err := normalizeSettings(map[string]string{"bad name": "1"}); err == nil {
		t.Error("bad setting name accepted")
	}
	if _, err := normalizeSettings(map[string]string{"work_mem": "1\ninclude '/etc/passwd'"}); err == nil {
		t.Error("value with a newline accepted")
	}
}

func TestDSNQuoting(t *testing.T) {
	c := &Cluster{sockDir: "/tmp/a dir", port: 5999}
	want := `host='/tmp/a dir' port=5999 user=pgarena dbname='it''s' sslmode=disable`
	want = strings.ReplaceAll(want, `''`, `\'`)
	if got := c.DSN("it's"); got != want {
		t.Errorf("DSN = %s, want %s", got, want)
	}
}

func TestNamedClusterRoundTrip(t *testing.T) {
	needBinaries(t)
	env := Env{"PGARENA_HOME=" + reachableTempDir(t)} // not the process environment
	ctx := context.Background()
	const name = "rt_1"

	if _, err := OpenNamed(env, name); !errors.Is(err, ErrNoCluster) || !strings.Contains(err.Error(), "pgarena cluster start --name "+name) {
		t.Fatalf("OpenNamed(missing) error = %v", err)
	}
	if _, err := StartNamed(ctx, "../evil", Options{Env: env}); err == nil {
		t.Fatal("StartNamed accepted an invalid name")
	}

	c, err := StartNamed(ctx, name, Options{Env: env, Settings: map[string]string{"work_mem": "9MB", "shared_buffers": "64MB"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { RemoveNamed(env, name) })
	port := c.Port()
	if _, err := os.Stat(filepath.Join(ClustersDir(env), name, markerFile)); err != nil {
		t.Errorf("metadata file: %v", err)
	}
	if _, err := StartNamed(ctx, name, Options{Env: env}); !errors.Is(err, ErrAlreadyRunning) || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second StartNamed error = %v, want ErrAlreadyRunning", err)
	}

	st, err := StatusNamed(env, name)
	if err != nil || !st.Running || st.Port != port || st.Version == "" {
		t.Errorf("StatusNamed = %+v, %v", st, err)
	}
	list, err := ListNamed(env)
	if err != nil || len(list) != 1 || list[0].Name != name {
		t.Errorf("ListNamed = %+v, %v", list, err)
	}
	o, err := OpenNamed(env, name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(o.Env(), " "), "PGHOST="+c.SocketDir()) {
		t.Errorf("Env() = %v", o.Env())
	}
	if got := show(t, o.DSN("postgres"), "work_mem"); got != "9MB" {
		t.Errorf("work_mem = %s", got)
	}

	if err := StopNamed(ctx, env, name); err != nil {
		t.Fatal(err)
	}
	if st, _ := StatusNamed(env, name); st.Running {
		t.Error("running after StopNamed")
	}

	// Restart: same port if free, settings kept, a new override applied.
	c, err = StartNamed(ctx, name, Options{Env: env, Settings: map[string]string{"maintenance_work_mem": "77MB"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port() != port {
		t.Logf("port changed from %d to %d (was it taken?)", port, c.Port())
	}
	if got := show(t, c.DSN("postgres"), "work_mem"); got != "9MB" {
		t.Errorf("work_mem after restart = %s, want 9MB kept", got)
	}
	if got := show(t, c.DSN("postgres"), "maintenance_work_mem"); got != "77MB" {
		t.Errorf("maintenance_work_mem after restart = %s", got)
	}

	if err := RemoveNamed(env, name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ClustersDir(env), name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster dir after RemoveNamed: %v", err)
	}
	if c.Running() {
		t.Error("server still running after RemoveNamed")
	}
	if _, err := StatusNamed(env, name); !errors.Is(err, ErrNoCluster) {
		t.Errorf("StatusNamed after remove: %v", err)
	}
}

func TestRemoveRefusesForeignDir(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	base := reachableTempDir(t)

	foreign := filepath.Join(base, "foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "precious"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), Options{DataDir: foreign}); err == nil || !strings.Contains(err.Error(), "did not create") {
		t.Errorf("Start on a foreign directory: %v", err)
	}

	dir := filepath.Join(base, "mine")
	c, err := Start(context.Background(), Options{DataDir: dir, Settings: map[string]string{"shared_buffers": "32MB"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, markerFile)
	saved, err := os.ReadFile(marker)
	if err != nil {
		t.Fatalf("marker: %v", err)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("Remove without marker: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		t.Fatalf("Remove without marker deleted data: %v", err)
	}
	// With the marker back, it restarts and removes.
	if err := os.WriteFile(marker, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = Start(context.Background(), Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := show(t, c.DSN("postgres"), "shared_buffers"); got != "32MB" {
		t.Errorf("shared_buffers after restart = %s, want 32MB kept", got)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after Remove: %v", dir, err)
	}
}

func TestRemoveStale(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	c, err := Start(context.Background(), Options{Settings: map[string]string{"shared_buffers": "32MB"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove()
	// Live owner (this process): untouched.
	if _, err := RemoveStale(nil); err != nil {
		t.Logf("RemoveStale: %v", err)
	}
	if !c.Running() {
		t.Fatal("RemoveStale stopped a cluster whose owner is alive")
	}
	// Pretend the owner died.
	marker := filepath.Join(filepath.Dir(c.DataDir()), markerFile)
	meta, err := readMeta(marker)
	if err != nil {
		t.Fatal(err)
	}
	meta.OwnerStart++
	if err := writeMeta(marker, meta); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveStale(nil)
	if err != nil {
		t.Logf("RemoveStale: %v", err)
	}
	found := false
	for _, r := range removed {
		found = found || r == filepath.Dir(c.DataDir())
	}
	if !found || c.Running() {
		t.Errorf("RemoveStale = %v; running %v", removed, c.Running())
	}
}

func TestLongDataDirPutsSocketElsewhere(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	dir := reachableTempDir(t)
	for len(dir) < 120 {
		dir = filepath.Join(dir, "a-rather-long-directory-name")
	}
	c, err := Start(context.Background(), Options{DataDir: dir, Settings: map[string]string{"shared_buffers": "32MB"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove()
	sock := c.SocketDir()
	if sock == c.DataDir() || len(socketPath(sock, c.Port())) > maxSocketPath {
		t.Fatalf("socket dir %s for data dir %s", sock, c.DataDir())
	}
	if got := show(t, c.DSN("postgres"), "unix_socket_directories"); got != sock {
		t.Errorf("unix_socket_directories = %s, want %s", got, sock)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket dir %s left behind: %v", sock, err)
	}
}

func TestStartDeadline(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, Options{}); err == nil {
		t.Fatal("Start with a cancelled context succeeded")
	} else {
		t.Logf("error (as expected): %v", err)
	}
}
