package pooler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/target"
)

// Deadlines of the pooler's life.
const (
	// DefaultReadyTimeout bounds the wait until a query passes through a
	// pooler started for the run (--pooler-ready-timeout).
	DefaultReadyTimeout = 20 * time.Second
	stopWait            = 10 * time.Second // after the stop signal, before SIGKILL
	// DefaultPoolSize is the server connections a pooler keeps when
	// --pool-size is not given (pgbouncer's default_pool_size).
	DefaultPoolSize = 20
	listenPort      = 6432 // names the socket .s.PGSQL.6432 in the private directory
)

// setup is what a kind configures itself from.
type setup struct {
	dir        string          // private directory: sockets, configuration, logs
	port       int             // the pooler's socket is dir/.s.PGSQL.<port>
	server     *pgx.ConnConfig // the server behind the pooler
	mode       string
	poolSize   int
	maxClients int // client connections it must accept (benchmark clients and a few more)
}

// serverAddr is the server's address for a pooler's configuration: host
// (or unix socket directory) and port.
func (s setup) serverAddr() (host string, port int) {
	return s.server.Host, int(s.server.Port)
}

// launch is a configured pooler, ready to start.
type launch struct {
	files  map[string]string // file name in dir -> content (mode 0600)
	args   []string          // after the program
	stop   syscall.Signal    // its fast shutdown signal
	pooler target.Pooler     // Kind, Mode, PoolSize, Note, Settings, StatsSocket
	// admin is the configuration of its statistics connection given the
	// clients' configuration (nil: statistics come from StatsSocket).
	admin         func(client *pgx.ConnConfig) *pgx.ConnConfig
	passwordFiles []string
}

// kind is one pooler program.
type kind interface {
	// program is the executable, the Debian package that has it and the
	// argument that prints its version.
	program() (bin, pkg, versionArg string)
	// modes lists the modes it accepts, the default first.
	modes() []string
	// pools reports whether it keeps a pool of server connections
	// (--pool-size applies).
	pools() bool
	configure(s setup) (launch, error)
}

// kinds are the poolers pgarena starts.
func kinds() map[string]kind {
	return map[string]kind{"pgbouncer": pgbouncer{}, "haproxy": haproxy{}, "pgpool": pgpool{}}
}

// Kinds lists the pooler kinds --via accepts.
func Kinds() []string {
	var out []string
	for k := range kinds() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Options choose a pooler.
type Options struct {
	Kind     string // pgbouncer, haproxy, pgpool
	Mode     string // "" for the kind's default
	PoolSize int    // 0: DefaultPoolSize
	// MaxClients is the most benchmark clients connected at once.
	MaxClients int
	// Env is pgarena's environment (KEY=VALUE): PATH finds the program,
	// TMPDIR holds its directory.
	Env   []string
	Notef func(format string, args ...any)
	// ReadyTimeout bounds the wait for the started pooler to pass a query
	// (0: DefaultReadyTimeout).
	ReadyTimeout time.Duration
}

// Provider starts a pooler in front of the target Inner provides.
type Provider struct {
	Inner target.Provider
	opts  Options
	kind  kind
	bin   string
}

// New checks the options and finds the program. Its errors are one line
// naming what to fix (bad input).
func New(inner target.Provider, o Options) (*Provider, error) {
	k, ok := kinds()[o.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown pooler %q (use %s)", o.Kind, strings.Join(Kinds(), ", "))
	}
	if o.Mode == "" {
		o.Mode = k.modes()[0]
	}
	if !contains(k.modes(), o.Mode) {
		return nil, fmt.Errorf("%s has no mode %q (use %s)", o.Kind, o.Mode, strings.Join(k.modes(), ", "))
	}
	if o.PoolSize < 0 {
		return nil, fmt.Errorf("pool size must be at least 1 (got %d)", o.PoolSize)
	}
	if o.PoolSize == 0 {
		o.PoolSize = DefaultPoolSize
	}
	if !k.pools() {
		o.PoolSize = 0
	}
	bin, err := findProgram(k, env(o.Env).get("PATH"))
	if err != nil {
		return nil, err
	}
	if o.Notef == nil {
		o.Notef = func(string, ...any) {}
	}
	return &Provider{Inner: inner, opts: o, kind: k, bin: bin}, nil
}

// Describe names the pooler and what is behind it.
func (p *Provider) Describe() string { return p.title("") + " in front of " + p.Inner.Describe() }

func (p *Provider) title(version string) string {
	s := p.opts.Kind
	if version != "" {
		s += " " + version
	}
	if p.opts.PoolSize > 0 {
		return fmt.Sprintf("%s (%s, pool %d)", s, p.opts.Mode, p.opts.PoolSize)
	}
	return fmt.Sprintf("%s (%s)", s, p.opts.Mode)
}

// CreatesTarget is the inner provider's.
func (p *Provider) CreatesTarget() bool { return target.CreatesTarget(p.Inner) }

// Pools reports whether the pooler multiplexes clients over a pool of
// server connections (--pool-size applies).
func (p *Provider) Pools() bool { return p.kind.pools() }

// CheckQueryMode refuses a client protocol the pooler cannot carry:
// prepared statements through pgbouncer's transaction or statement pooling
// (a transaction may run on a server connection that never saw PREPARE).
func (p *Provider) CheckQueryMode(mode string) error {
	if mode == "prepared" && p.opts.Kind == "pgbouncer" && p.opts.Mode != "session" {
		return fmt.Errorf("-M prepared does not work through pgbouncer in %s mode (prepared statements stay on the server connection where they were made): use -M simple or -M extended, pgbouncer:session, or pgbouncer >= 1.21 with max_prepared_statements",
			p.opts.Mode)
	}
	return nil
}

// Provision provisions the inner target, then starts the pooler in front of
// it and waits until a query passes through.
func (p *Provider) Provision(ctx context.Context) (*target.Target, func(), error) {
	if removed, err := RemoveStale(env(p.opts.Env).tempDir()); err != nil {
		p.opts.Notef("%v", err)
	} else if len(removed) > 0 {
		p.opts.Notef("removed poolers left by pgarena processes that were killed: %s", strings.Join(removed, ", "))
	}
	inner, innerDown, err := p.Inner.Provision(ctx)
	if err != nil {
		return nil, nil, err
	}
	t, stop, err := p.start(ctx, inner)
	if err != nil {
		innerDown()
		return nil, nil, err
	}
	return t, func() {
		if err := stop(); err != nil {
			p.opts.Notef("%v", err)
		}
		innerDown()
	}, nil
}

func (p *Provider) start(ctx context.Context, inner *target.Target) (*target.Target, func() error, error) {
	acct, err := account(inner.DataDir)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp(env(p.opts.Env).tempDir(), "pgarena-"+p.opts.Kind+"-")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p.opts.Kind, err)
	}
	fail := func(err error) (*target.Target, func() error, error) {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	if err := acct.chown(dir); err != nil {
		return fail(err)
	}
	s := setup{dir: dir, port: listenPort, server: inner.Config, mode: p.opts.Mode, poolSize: p.opts.PoolSize,
		maxClients: p.opts.MaxClients + 10}
	l, err := p.kind.configure(s)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", p.opts.Kind, err))
	}
	for name, data := range l.files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			return fail(err)
		}
		if err := acct.chown(path); err != nil {
			return fail(err)
		}
	}
	_, _, vArg := p.kind.program()
	version := programVersion(ctx, p.bin, vArg)
	proc, err := startProcess(p.bin, l.args, dir, acct, l.stop)
	if err != nil {
		return fail(fmt.Errorf("starting %s: %w", p.opts.Kind, err))
	}
	if err := writeOwner(dir, proc.cmd.Process.Pid); err != nil {
		proc.stopWithin(stopWait)
		return fail(err)
	}
	client := clientConfig(inner.Config, dir, listenPort)
	if err := proc.waitReady(ctx, client, p.opts); err != nil {
		proc.stopWithin(stopWait)
		os.RemoveAll(dir)
		return nil, nil, err
	}
	desc := l.pooler
	desc.Version = version
	t := *inner
	t.Config, t.Server, t.Pooler = client, inner.Config, &desc
	t.Description = p.title(version) + " in front of " + inner.Description
	if l.admin != nil {
		t.Admin = l.admin(client)
	}
	stop := func() error {
		err := proc.stopWithin(stopWait)
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = fmt.Errorf("could not remove %s's directory %s: %w", p.opts.Kind, dir, rerr)
		}
		return err
	}
	p.opts.Notef("started %s on %s", p.title(version), dir)
	return &t, stop, nil
}

// clientConfig is the clients' configuration through the pooler's socket:
// the server's user, database, password and parameters, no TLS (a local
// socket in a private directory).
func clientConfig(server *pgx.ConnConfig, dir string, port int) *pgx.ConnConfig {
	c := server.Copy()
	c.Host, c.Port = dir, uint16(port)
	c.TLSConfig, c.Fallbacks = nil, nil
	return c
}

// adminConfig is a connection to a pooler's console (pgbouncer's pgbouncer
// database; pgpool answers its SHOW commands on any connection): simple
// protocol, which consoles require.
func adminConfig(client *pgx.ConnConfig, dbname string) *pgx.ConnConfig {
	c := client.Copy()
	if dbname != "" {
		c.Database = dbname
	}
	c.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return c
}

// programVersion runs "bin versionArg" and returns the first version
// number it prints ("" when it prints none within 5 s).
func programVersion(ctx context.Context, bin, arg string) string {
	vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(vctx, bin, arg)
	cmd.WaitDelay = time.Second
	out, _ := cmd.CombinedOutput()
	return versionRE.Get().FindString(string(out))
}

var versionRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+(\.\d+)?`) }}

// account is who the pooler runs as: ourselves, or as root (pgbouncer
// refuses root) the owner of the server's data directory, else postgres,
// else nobody.
type runAs struct{ uid, gid uint32 }

func account(dataDir string) (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if dataDir != "" {
		if fi, err := os.Stat(dataDir); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
				return &runAs{st.Uid, st.Gid}, nil
			}
		}
	}
	for _, name := range []string{"postgres", "nobody"} {
		if u, err := user.Lookup(name); err == nil {
			uid, _ := strconv.ParseUint(u.Uid, 10, 32)
			gid, _ := strconv.ParseUint(u.Gid, 10, 32)
			if uid != 0 {
				return &runAs{uint32(uid), uint32(gid)}, nil
			}
		}
	}
	return nil, errors.New("pgarena runs as root and the pooler must not: create a postgres system user, or run pgarena as an ordinary user")
}

func (a *runAs) chown(path string) error {
	if a == nil {
		return nil
	}
	return os.Lchown(path, int(a.uid), int(a.gid))
}

// env reads KEY=VALUE lists (the last setting wins).
type env []string

func (e env) get(key string) string {
	for i := len(e) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(e[i], key+"="); ok {
			return v
		}
	}
	return ""
}

func (e env) tempDir() string {
	if d := e.get("TMPDIR"); d != "" {
		return d
	}
	return "/tmp"
}

// findProgram finds a kind's program; missing, it says what to install.
func findProgram(k kind, path string) (string, error) {
	name, pkg, _ := k.program()
	bin, ok := lookPath(name, path)
	if !ok {
		return "", fmt.Errorf("install %s (apt-get install %s)", name, pkg)
	}
	return bin, nil
}

// lookPath finds an executable in path, then in the sbin directories
// Debian installs poolers into (not on an ordinary user's PATH).
func lookPath(name, path string) (string, bool) {
	dirs := append(filepath.SplitList(path), "/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin")
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// settingsText renders key = value lines in order (for configuration files).
func settingsText(keys []string, m map[string]string) string {
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, m[k])
	}
	return b.String()
}
