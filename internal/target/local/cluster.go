package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/await"
)

const (
	// markerFile proves that pgarena created a directory: Remove deletes
	// nothing without it. It holds clusterMeta as JSON.
	markerFile = "pgarena-cluster.json"
	// Superuser is the superuser role initdb creates (trust authentication).
	Superuser = "pgarena"

	defaultStartTimeout = 60 * time.Second
	defaultStopTimeout  = 2 * time.Minute
	killTimeout         = 15 * time.Second

	tempPrefix   = "pgarena-"
	socketPrefix = "pgarena-s-"
	// maxSocketPath is the longest unix socket path the kernel accepts
	// (sizeof(sun_path) - 1 for the terminating NUL).
	maxSocketPath = 107
	logTailLines  = 20
)

// ErrAlreadyRunning is wrapped when starting a cluster whose server is running.
var ErrAlreadyRunning = errors.New("cluster is already running")

// Options configures Start.
type Options struct {
	BinDir         string            // "" = FindBinaries("", Env)
	DataDir        string            // "" = a new temp dir (removed by Remove); else a named/persistent dir
	Port           int               // 0 = pick a free TCP port on 127.0.0.1
	Settings       map[string]string // user overrides (--pg-set key=value), applied over Defaults
	MinConnections int               // max_connections is at least this (callers pass clients+20)
	LogPath        string            // server log file; "" = <DataDir>/server.log
	// Notef receives notes for the user (e.g. which account runs the
	// server when pgarena runs as root); may be nil.
	Notef func(format string, args ...any)
	// Env is the environment to find binaries (PATH) and temporary
	// directories (TMPDIR) in and to run the server programs with (minus
	// PG* and locale variables); nil is empty.
	Env Env
	// StartTimeout bounds initdb, and then the server start and first
	// connection (each separately; ctx may end sooner). Default 60s.
	StartTimeout time.Duration
	// BaseBackupFrom, when set, is a connection string of a primary: a new
	// cluster is then a streaming standby of it, its data directory filled
	// by pg_basebackup (standby.signal and primary_conninfo written)
	// instead of initdb.
	BaseBackupFrom string
}

func (o Options) notef(format string, args ...any) {
	if o.Notef != nil {
		o.Notef(format, args...)
	}
}

// Cluster is a PostgreSQL cluster pgarena started or found.
type Cluster struct {
	bin        Binaries
	name       string // named clusters only
	dataDir    string
	sockDir    string
	ownSockDir string // short socket dir pgarena created (removed at Stop), "" if the socket is in dataDir
	port       int
	logPath    string
	settings   map[string]string
	acct       *serverAccount // nil: the server runs as ourselves
	root       string         // directory Remove deletes
	marker     string         // metadata file; Remove requires it
	temp       bool
	createdAt  time.Time
	env        Env // of the server programs (see Env.child)
	notef      func(format string, args ...any)
}

// clusterMeta is the content of the pgarena-cluster.json marker.
type clusterMeta struct {
	Name           string            `json:"name,omitempty"`
	DataDir        string            `json:"data_dir"`
	BinDir         string            `json:"bin_dir,omitempty"`
	Version        string            `json:"version,omitempty"`
	Port           int               `json:"port,omitempty"`
	SocketDir      string            `json:"socket_dir,omitempty"`
	LogPath        string            `json:"log_path,omitempty"`
	Settings       map[string]string `json:"settings,omitempty"`  // applied at the last start
	Overrides      map[string]string `json:"overrides,omitempty"` // the user's settings, kept across restarts
	MinConnections int               `json:"min_connections,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
	Temp           bool              `json:"temp,omitempty"`
	OwnerPID       int               `json:"owner_pid,omitempty"`   // temp clusters: the pgarena process
	OwnerStart     uint64            `json:"owner_start,omitempty"` // its start time, in clock ticks since boot
}

// layout says where a cluster lives.
type layout struct {
	root    string // what Remove deletes
	dataDir string
	marker  string
	temp    bool
	name    string
}

// Start starts a cluster: a new temporary one when opts.DataDir is empty,
// else the cluster in opts.DataDir, initialising it first when the directory
// does not exist or is empty. An existing non-empty directory pgarena did
// not create (no pgarena-cluster.json) is refused. On failure nothing is
// left running, the error includes the tail of the initdb output or server
// log, and a temporary directory is removed.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.DataDir == "" {
		return start(ctx, opts, layout{temp: true})
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	return start(ctx, opts, layout{root: dir, dataDir: dir, marker: filepath.Join(dir, markerFile)})
}

func start(ctx context.Context, opts Options, lay layout) (c *Cluster, err error) {
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = defaultStartTimeout
	}
	var meta clusterMeta
	hasMeta := false
	initialized := false
	if !lay.temp {
		if meta, err = readMeta(lay.marker); err == nil {
			hasMeta = true
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if !hasMeta && !emptyOrMissing(lay.dataDir) {
			return nil, fmt.Errorf("%s is not empty and has no %s marker: pgarena did not create it and will not use it; choose a new or empty directory", lay.dataDir, markerFile)
		}
		initialized = fileExists(filepath.Join(lay.dataDir, "PG_VERSION"))
	}

	// Binaries: the override, else those the cluster was made with, else search.
	var bin Binaries
	switch {
	case opts.BinDir != "":
		bin, err = FindBinaries(opts.BinDir, opts.Env)
	case meta.BinDir != "":
		if bin, err = FindBinaries(meta.BinDir, opts.Env); err != nil {
			bin, err = FindBinaries("", opts.Env)
		}
	default:
		bin, err = FindBinaries("", opts.Env)
	}
	if err != nil {
		return nil, err
	}

	var acct *serverAccount
	createdAcct := false
	if initialized {
		if err := checkDataVersion(lay.dataDir, bin); err != nil {
			return nil, err
		}
		probe := &Cluster{dataDir: lay.dataDir}
		if probe.Running() {
			port, _, _ := readPidFile(lay.dataDir)
			return nil, fmt.Errorf("%w: the server in %s is running on port %d", ErrAlreadyRunning, lay.dataDir, port)
		}
		if acct, err = serverAccountOf(lay.dataDir); err != nil {
			return nil, err
		}
	} else if acct, createdAcct, err = serverAccountForNewCluster(ctx); err != nil {
		return nil, err
	}

	// Directories.
	createdDataDir := false
	if !initialized {
		parent := opts.Env.tempDir()
		if !lay.temp {
			parent = filepath.Dir(lay.dataDir)
		}
		if err := acct.checkReachable(parent, "choose a directory it can reach (for temporary clusters set TMPDIR; for named clusters set PGARENA_HOME)"); err != nil {
			return nil, err
		}
		if lay.temp {
			root, mkErr := os.MkdirTemp(opts.Env.tempDir(), tempPrefix)
			if mkErr != nil {
				return nil, fmt.Errorf("creating a temporary cluster directory: %w", mkErr)
			}
			lay.root, lay.dataDir, lay.marker = root, filepath.Join(root, "data"), filepath.Join(root, markerFile)
			defer func() {
				if err != nil {
					os.RemoveAll(root)
				}
			}()
			meta = clusterMeta{DataDir: lay.dataDir, BinDir: bin.Dir, Version: bin.Version, Temp: true, CreatedAt: time.Now().UTC(), OwnerPID: os.Getpid(), OwnerStart: processStart(os.Getpid())}
			if err := writeMeta(lay.marker, meta); err != nil {
				return nil, err
			}
			if err := acct.chown(root); err != nil {
				return nil, err
			}
		} else if err := mkdirAllMode(parent, 0o755); err != nil {
			return nil, err
		}
		if err := os.Mkdir(lay.dataDir, 0o700); err == nil {
			createdDataDir = true
		} else if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("creating data directory: %w", err)
		}
		if err := os.Chmod(lay.dataDir, 0o700); err != nil {
			return nil, err
		}
		if err := acct.chown(lay.dataDir); err != nil {
			return nil, err
		}
		if createdDataDir && !lay.temp && lay.root == lay.dataDir {
			defer func() {
				if err != nil {
					os.RemoveAll(lay.dataDir)
				}
			}()
		}
	}
	if acct != nil {
		what := "because pgarena runs as root and PostgreSQL refuses to"
		if createdAcct {
			what = "(a system user created for this, as there is no postgres user) " + what
		}
		opts.notef("running the PostgreSQL server as user %s %s; its data directory %s is owned by %s with mode 0700", acct.name, what, lay.dataDir, acct.name)
	}

	// Settings.
	overrides := copySettings(meta.Overrides)
	userSettings, err := normalizeSettings(opts.Settings)
	if err != nil {
		return nil, err
	}
	for k, v := range userSettings {
		overrides[k] = v
	}
	minConns := opts.MinConnections
	if minConns <= 0 {
		minConns = meta.MinConnections
	}
	settings := Defaults(MemoryBytes(), minConns)
	for k, v := range overrides {
		settings[k] = v
	}
	if v, ok := overrides["max_connections"]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n < minConns {
			opts.notef("max_connections=%d as set, below the %d connections this run needs", n, minConns)
		}
	}

	logPath := opts.LogPath
	if logPath == "" {
		logPath = meta.LogPath
	}
	if logPath == "" {
		logPath = filepath.Join(lay.dataDir, "server.log")
	}
	if logPath, err = filepath.Abs(logPath); err != nil {
		return nil, err
	}

	c = &Cluster{
		bin: bin, name: lay.name, dataDir: lay.dataDir, logPath: logPath, settings: settings,
		acct: acct, root: lay.root, marker: lay.marker, temp: lay.temp, createdAt: meta.CreatedAt, env: opts.Env,
		notef: opts.notef,
	}
	if !initialized {
		ictx, cancel := context.WithTimeout(ctx, timeout)
		var err error
		if opts.BaseBackupFrom != "" {
			err = c.baseBackup(ictx, opts.BaseBackupFrom)
		} else {
			err = c.initdb(ictx)
		}
		cancel()
		if err != nil {
			return nil, err
		}
	}

	// Port: the one asked for, else the one used last time if free, else any.
	fixedPort := opts.Port > 0
	switch {
	case fixedPort:
		c.port = opts.Port
	case meta.Port > 0 && portFree(meta.Port):
		c.port = meta.Port
	case meta.Port > 0:
		opts.notef("port %d of the cluster in %s is in use; picking another", meta.Port, lay.dataDir)
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.launch(sctx, fixedPort); err != nil {
		return nil, err
	}

	// Record what was done.
	if meta.CreatedAt.IsZero() {
		meta.CreatedAt = time.Now().UTC()
	}
	c.createdAt = meta.CreatedAt
	meta.Name, meta.DataDir, meta.BinDir, meta.Version = lay.name, lay.dataDir, bin.Dir, bin.Version
	meta.Port, meta.LogPath, meta.Settings, meta.Overrides, meta.MinConnections = c.port, logPath, c.Settings(), overrides, minConns
	meta.SocketDir = c.ownSockDir
	if err := writeMeta(lay.marker, meta); err != nil {
		c.kill()
		c.removeOwnSockDir()
		return nil, err
	}
	return c, nil
}

// initdb creates the cluster and makes postgresql.conf include pgarena.conf.
func (c *Cluster) initdb(ctx context.Context) error {
	cmd := c.acct.command(ctx, c.env, c.bin.Path("initdb"),
		"-D", c.dataDir, "-U", Superuser, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("initdb (PostgreSQL %s in %s) for %s failed: %v", c.bin.Version, c.bin.Dir, c.dataDir, deadlineErr(ctx, err))
		if s := strings.TrimSpace(string(out)); s != "" {
			msg += "\n--- last lines of initdb output ---\n" + lastLines(s, logTailLines)
		}
		return errors.New(msg)
	}
	f, err := os.OpenFile(filepath.Join(c.dataDir, "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\n# Added by pgarena: its settings, rewritten at every start.\ninclude = '%s'\n", confFile)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("editing postgresql.conf: %w", err)
	}
	if c.marker != "" && filepath.Dir(c.marker) == c.dataDir {
		// The marker of a plain data directory lives inside it; initdb
		// needed the directory empty, so it is written now.
		return writeMeta(c.marker, clusterMeta{DataDir: c.dataDir, CreatedAt: time.Now().UTC()})
	}
	return nil
}

// baseBackup fills the data directory from a primary with pg_basebackup
// and makes it a standby of primary, then makes sure postgresql.conf
// includes pgarena.conf. From PostgreSQL 12 on it writes standby.signal and
// primary_conninfo (in postgresql.auto.conf, as -R) itself: -R writes every
// connection option pg_basebackup's libpq knows, and a server older than
// that libpq refuses them ("invalid connection option sslnegotiation").
func (c *Cluster) baseBackup(ctx context.Context, primary string) error {
	args := []string{"-D", c.dataDir, "-X", "stream", "-c", "fast", "--no-sync", "-d", primary}
	if c.bin.Major < 12 {
		args = append(args, "-R") // recovery.conf
	}
	cmd := c.acct.command(ctx, c.env, c.bin.Path("pg_basebackup"), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("pg_basebackup (PostgreSQL %s) into %s failed: %v", c.bin.Version, c.dataDir, deadlineErr(ctx, err))
		if s := strings.TrimSpace(string(out)); s != "" {
			msg += "\n--- last lines of pg_basebackup output ---\n" + lastLines(s, logTailLines)
		}
		return errors.New(msg)
	}
	if c.bin.Major >= 12 {
		if err := c.acct.writeFile(filepath.Join(c.dataDir, "standby.signal"), nil, 0o600); err != nil {
			return err
		}
		if err := appendFile(filepath.Join(c.dataDir, "postgresql.auto.conf"), "primary_conninfo = "+confQuote(primary)+"\n"); err != nil {
			return err
		}
	}
	conf := filepath.Join(c.dataDir, "postgresql.conf")
	b, err := os.ReadFile(conf)
	if err != nil {
		return err
	}
	if strings.Contains(string(b), "include = '"+confFile+"'") {
		return nil
	}
	return appendFile(conf, fmt.Sprintf("\n# Added by pgarena: its settings, rewritten at every start.\ninclude = '%s'\n", confFile))
}

// appendFile appends text to an existing file (keeping its owner).
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// launch starts the server with pg_ctl and waits until it answers a query.
// With an automatic port it retries with another port when the one picked
// was taken meanwhile. On failure nothing is left running.
func (c *Cluster) launch(ctx context.Context, fixedPort bool) error {
	attempts := 1
	if !fixedPort {
		attempts = 3
	}
	var lastErr error
	for attempt := 0; attempt < attempts; attempt++ {
		if c.port == 0 || attempt > 0 {
			port, err := freePort()
			if err != nil {
				return err
			}
			c.port = port
		}
		if err := c.prepareSocketDir(); err != nil {
			return err
		}
		c.settings["port"] = strconv.Itoa(c.port)
		c.settings["unix_socket_directories"] = c.sockDir
		if err := c.acct.writeFile(filepath.Join(c.dataDir, confFile), []byte(renderConf(c.settings)), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", confFile, err)
		}
		logStart, err := c.prepareLog()
		if err != nil {
			return err
		}

		// pg_ctl -w waits for the server, bounded by ctx: report progress
		// with the server's last logged line meanwhile.
		var out string
		w := await.Wait{What: fmt.Sprintf("PostgreSQL %s in %s to start", c.bin.Version, c.dataDir), Notef: c.notef}
		if d, ok := ctx.Deadline(); ok {
			w.Timeout = time.Until(d)
		}
		err = w.During(func() string {
			if l := lastLines(strings.TrimSpace(readFrom(c.logPath, logStart)), 1); l != "" {
				return "its log: " + l
			}
			return ""
		}, func() error {
			var err error
			out, err = c.pgCtl(ctx, "start", "-l", c.logPath)
			if err == nil {
				err = waitReady(ctx, c.DSN("postgres"))
			}
			return err
		})
		if err == nil {
			return nil
		}
		err = deadlineErr(ctx, err)
		newLog := readFrom(c.logPath, logStart)
		kerr := c.kill()
		c.removeOwnSockDir()
		msg := fmt.Sprintf("starting PostgreSQL %s (%s) in %s on port %d failed: %v", c.bin.Version, c.bin.Dir, c.dataDir, c.port, err)
		if s := strings.TrimSpace(out); s != "" {
			msg += "\n--- pg_ctl output ---\n" + lastLines(s, logTailLines)
		}
		if s := strings.TrimSpace(newLog); s != "" {
			msg += fmt.Sprintf("\n--- last lines of %s ---\n%s", c.logPath, lastLines(s, logTailLines))
		}
		if kerr != nil {
			msg += "\nand the server may still be running: " + kerr.Error()
			return errors.New(msg)
		}
		lastErr = errors.New(msg)
		if fixedPort || !strings.Contains(newLog+out, "Address already in use") {
			return lastErr
		}
	}
	return lastErr
}

// pgCtl runs pg_ctl ACTION -D datadir -w -t SECS with the given extra args,
// the timeout taken from ctx (which must have a deadline).
func (c *Cluster) pgCtl(ctx context.Context, action string, args ...string) (string, error) {
	secs := 60
	if d, ok := ctx.Deadline(); ok {
		// Leave pg_ctl a second less than we wait for it, so its own message wins.
		secs = max(1, int(time.Until(d).Seconds())-1)
	}
	full := append([]string{action, "-D", c.dataDir, "-w", "-t", strconv.Itoa(secs)}, args...)
	out, err := c.acct.command(ctx, c.env, c.bin.Path("pg_ctl"), full...).CombinedOutput()
	return string(out), err
}

// prepareSocketDir puts the unix socket in the data directory, or, when that
// path would exceed the 107 bytes a unix socket path may have, in a short
// private directory under the temp dir (or /tmp).
func (c *Cluster) prepareSocketDir() error {
	c.removeOwnSockDir()
	c.sockDir = c.dataDir
	if len(socketPath(c.dataDir, c.port)) <= maxSocketPath {
		return nil
	}
	base := c.env.tempDir()
	if len(socketPath(filepath.Join(base, socketPrefix+"0123456789"), c.port)) > maxSocketPath {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, socketPrefix)
	if err != nil {
		return fmt.Errorf("creating a socket directory: %w", err)
	}
	if err := c.acct.chown(dir); err != nil {
		os.Remove(dir)
		return err
	}
	c.sockDir, c.ownSockDir = dir, dir
	return nil
}

func socketPath(dir string, port int) string {
	return filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(port))
}

func (c *Cluster) removeOwnSockDir() {
	if c.ownSockDir != "" {
		os.RemoveAll(c.ownSockDir)
		c.ownSockDir = ""
	}
}

// prepareLog makes sure the server account can append to the log file and
// returns its current size (where this start's messages begin).
func (c *Cluster) prepareLog() (int64, error) {
	if err := mkdirAllMode(filepath.Dir(c.logPath), 0o755); err != nil {
		return 0, err
	}
	created := !fileExists(c.logPath)
	f, err := os.OpenFile(c.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return 0, fmt.Errorf("opening server log: %w", err)
	}
	defer f.Close()
	if created {
		if err := c.acct.chown(c.logPath); err != nil {
			return 0, err
		}
	}
	if err := c.acct.checkReachable(filepath.Dir(c.logPath), "choose a log file it can write"); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// waitReady connects and runs `select 1` until it works or ctx ends.
func waitReady(ctx context.Context, dsn string) error {
	for {
		err := ping(ctx, dsn)
		if err == nil {
			return nil
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("the server did not accept connections in time: %w", err)
		case <-t.C:
		}
	}
}

func ping(ctx context.Context, dsn string) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(cctx)
	var one int
	return conn.QueryRow(cctx, "select 1").Scan(&one)
}

// DSN returns a libpq keyword/value connection string over the unix socket.
func (c *Cluster) DSN(dbname string) string {
	return dsn(c.sockDir, c.port, dbname)
}

// TCPDSN returns a libpq keyword/value connection string over TCP to
// 127.0.0.1 (for tools such as pgbench that prefer TCP).
func (c *Cluster) TCPDSN(dbname string) string {
	return dsn("127.0.0.1", c.port, dbname)
}

func dsn(host string, port int, dbname string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
		dsnQuote(host), port, Superuser, dsnQuote(dbname))
}

// dsnQuote quotes a libpq keyword/value value when it needs quoting.
func dsnQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r\v\f'\\") {
		return v
	}
	v = strings.ReplaceAll(v, `\`, `\\`)
	return "'" + strings.ReplaceAll(v, `'`, `\'`) + "'"
}

// Port returns the TCP port (and unix socket number).
func (c *Cluster) Port() int { return c.port }

// DataDir returns the data directory.
func (c *Cluster) DataDir() string { return c.dataDir }

// SocketDir returns the directory holding the unix socket.
func (c *Cluster) SocketDir() string { return c.sockDir }

// LogPath returns the server log file.
func (c *Cluster) LogPath() string { return c.logPath }

// Binaries returns the installation the cluster runs from.
func (c *Cluster) Binaries() Binaries { return c.bin }

// Name returns the name of a named cluster ("" otherwise).
func (c *Cluster) Name() string { return c.name }

// Settings returns a copy of the settings applied, including port and
// unix_socket_directories.
func (c *Cluster) Settings() map[string]string { return copySettings(c.settings) }

// Env returns PGHOST, PGPORT, PGUSER and PGDATABASE as KEY=VALUE strings
// (unquoted: usable as a process environment; quote them for a shell).
func (c *Cluster) Env() []string {
	return []string{
		"PGHOST=" + c.sockDir,
		"PGPORT=" + strconv.Itoa(c.port),
		"PGUSER=" + Superuser,
		"PGDATABASE=postgres",
	}
}

// Running reports whether the cluster's postmaster is alive.
func (c *Cluster) Running() bool {
	pid, err := postmasterPID(c.dataDir)
	return err == nil && processAlive(pid)
}

// StopCommand is a shell command that stops the server, for the user to
// run later: pg_ctl by its full path, under the server's account when
// pgarena runs as root (pg_ctl refuses to run as root).
func (c *Cluster) StopCommand() string {
	cmd := shellQuote(c.bin.Path("pg_ctl")) + " -D " + shellQuote(c.dataDir) + " stop"
	if c.acct != nil {
		cmd = "su -s /bin/sh " + shellQuote(c.acct.name) + " -c " + shellQuote(cmd)
	}
	return cmd
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Stop stops the server: pg_ctl stop -m fast, then -m immediate, then
// SIGKILL of the postmaster. Without a deadline in ctx it waits at most two
// minutes. Stopping a stopped cluster is not an error.
func (c *Cluster) Stop(ctx context.Context) error {
	defer c.removeOwnSockDir()
	if !c.Running() {
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStopTimeout)
		defer cancel()
	}
	out, err := c.pgCtl(ctx, "stop", "-m", "fast")
	if err == nil && !c.Running() {
		return nil
	}
	if kerr := c.kill(); kerr != nil {
		return fmt.Errorf("stopping PostgreSQL in %s: fast shutdown failed (%v: %s), and then: %w", c.dataDir, err, strings.TrimSpace(out), kerr)
	}
	return nil
}

// Crash stops the server at once: pg_ctl stop -m immediate (no
// checkpoint; sessions are cut off, as by a power failure of the server).
func (c *Cluster) Crash(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	if out, err := c.pgCtl(ctx, "stop", "-m", "immediate"); err != nil {
		return fmt.Errorf("immediate shutdown of PostgreSQL in %s: %v: %s", c.dataDir, err, strings.TrimSpace(out))
	}
	return nil
}

// kill stops the server however it can: pg_ctl stop -m immediate, then
// SIGKILL of the postmaster. It waits a moment for a postmaster.pid to
// appear, since pg_ctl start may have been interrupted right after forking.
func (c *Cluster) kill() error {
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	for i := 0; i < 10 && !fileExists(filepath.Join(c.dataDir, "postmaster.pid")); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if !c.Running() {
		return nil
	}
	ictx, icancel := context.WithTimeout(ctx, killTimeout/2)
	c.pgCtl(ictx, "stop", "-m", "immediate")
	icancel()
	if !c.Running() {
		return nil
	}
	pid, err := postmasterPID(c.dataDir)
	if err != nil {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing postmaster %d: %w", pid, err)
	}
	for processAlive(pid) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("postmaster %d still alive after SIGKILL", pid)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Remove stops the server if it runs, then deletes the cluster's directory
// (the temp directory, the named cluster's directory, or the data
// directory) — only when pgarena created it: a temporary cluster of this
// process, or a directory holding a pgarena-cluster.json marker.
func (c *Cluster) Remove() error {
	if c.root == "" || !filepath.IsAbs(c.root) || filepath.Dir(c.root) == c.root {
		return fmt.Errorf("refusing to remove %q: not a cluster directory pgarena created", c.root)
	}
	if !fileExists(c.marker) || filepath.Dir(c.marker) != c.root {
		return fmt.Errorf("refusing to remove %s: it has no %s marker, so pgarena did not create it", c.root, markerFile)
	}
	ctx, cancel := context.WithTimeout(context.Background(), defaultStopTimeout)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		return err
	}
	if err := os.RemoveAll(c.root); err != nil {
		return fmt.Errorf("removing cluster directory: %w", err)
	}
	return nil
}

// readPidFile reads port and socket directory from postmaster.pid (lines
// 4 and 5).
func readPidFile(dataDir string) (port int, sockDir string, err error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, "", err
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 5 {
		return 0, "", fmt.Errorf("short postmaster.pid in %s", dataDir)
	}
	port, err = strconv.Atoi(strings.TrimSpace(lines[3]))
	return port, strings.TrimSpace(lines[4]), err
}

func postmasterPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("bad postmaster.pid in %s", dataDir)
	}
	return pid, nil
}

// processAlive reports whether pid is a live PostgreSQL process (a stale
// postmaster.pid may name a pid reused by something else).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	name := strings.TrimSpace(string(comm))
	if strings.HasPrefix(name, "postgres") || strings.HasPrefix(name, "postmaster") {
		// A zombie is dead for our purposes.
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i:]), ") Z") {
				return false
			}
		}
		return true
	}
	return false
}

// processStart returns a process's start time (field 22 of /proc/PID/stat),
// 0 when unknown. Together with the pid it identifies a process.
func processStart(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(fields[19], 10, 64)
	return v
}

func checkDataVersion(dataDir string, bin Binaries) error {
	b, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION"))
	if err != nil {
		return err
	}
	v := strings.TrimSpace(string(b))
	major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if major != bin.Major {
		return fmt.Errorf("%s was initialised by PostgreSQL %s but the binaries in %s are version %s: pass --pg-bin with PostgreSQL %s binaries", dataDir, v, bin.Dir, bin.Version, v)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func readMeta(path string) (clusterMeta, error) {
	var m clusterMeta
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("reading %s: %w", path, err)
	}
	return m, nil
}

// writeMeta writes the marker atomically (temp file and rename).
func writeMeta(path string, m clusterMeta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func emptyOrMissing(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// readFrom returns the content of path from offset on (at most the last
// 64KiB of it).
func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	const maxRead = 64 << 10
	if fi.Size()-offset > maxRead {
		offset = fi.Size() - maxRead
	}
	if offset < 0 || offset > fi.Size() {
		offset = 0
	}
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, fi.Size()-offset))
	return string(b)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// mkdirAllMode is os.MkdirAll giving every directory it creates exactly
// perm (whatever the umask), so that the server account can search them.
func mkdirAllMode(dir string, perm os.FileMode) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAllMode(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil
		}
		return err
	}
	return os.Chmod(dir, perm)
}

// deadlineErr explains an error caused by ctx ending.
func deadlineErr(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("did not finish before the deadline (StartTimeout): %w", err)
	case ctx.Err() != nil:
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}
