package target

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Target is a database a run reaches: how to dial it, how to describe it
// (without a password) and what is known of where it runs.
type Target struct {
	// Config is the connection configuration clients start from. Dial and
	// Dialer copy it; it is never printed (Description is).
	Config *pgx.ConnConfig
	// Description names the target for the run spec, redacted.
	Description string
	// Local is set when the server runs on this host: host samples then
	// describe the server too, and DataDir and ServerLog may be read.
	Local bool
	// DataDir and ServerLog are the server's data directory and log file
	// when known (empty otherwise).
	DataDir   string
	ServerLog string
	// Fresh is set when the target was created for this run (embedded
	// cluster): it is always loaded, and its server log belongs to the run.
	Fresh bool
	// Admin is the configuration of an administrative connection where the
	// target has one besides Config (a pooler's admin console, the primary
	// behind a pooler); nil otherwise.
	Admin *pgx.ConnConfig
	// Replicas follow the target (--replica, --replica-dsn): their lag and
	// catch-up are measured (nil: none).
	Replicas []Replica
	// Crash, when set, stops the server at once (an immediate shutdown:
	// no checkpoint, every session cut off), for a cluster pgarena runs.
	Crash func(ctx context.Context) error
	// Server is the database server itself when Config goes through a
	// pooler (nil otherwise): samplers, the loader and the control
	// connection use it, so they watch the server, not the pooler.
	Server *pgx.ConnConfig
	// Pooler describes the pooler or proxy Config goes through (nil: none).
	Pooler *Pooler
}

// Pooler describes a connection pooler or proxy between the clients and
// the server, for the run record and the pooler sampler.
type Pooler struct {
	Kind     string // pgbouncer, haproxy, pgpool; "console" for an external pooler known by its admin console
	Mode     string // session, transaction, statement (pgbouncer), raw (pgpool), tcp (haproxy)
	PoolSize int    // server connections it keeps at most; 0 when it does not pool
	Version  string
	Note     string            // what to keep in mind ("a TCP proxy: no pooling")
	Settings map[string]string // its configuration as generated, without passwords
	// StatsSocket is haproxy's stats socket (a unix socket path).
	StatsSocket string
}

// Direct returns the target the server itself is reached as: t, or a
// copy whose Config is Server when t goes through a pooler.
func (t *Target) Direct() *Target {
	if t.Server == nil {
		return t
	}
	d := *t
	d.Config, d.Server, d.Pooler, d.Admin = t.Server, nil, nil, nil
	return &d
}

// Connect opens one connection under the given application_name.
func (t *Target) Connect(ctx context.Context, appName string) (*pgx.Conn, error) {
	return Connect(ctx, t.Config, appName)
}

// Dialer returns a Dialer of connections configured by configure (query
// mode, socket I/O), applied once to a copy of Config. Under sslmode=prefer
// to one host, once the server has taken a connection without TLS the
// later ones go without it at once: pgx would otherwise open a connection,
// be refused TLS and open a second one for every client, and keep copies
// of the TLS configuration in each (~2 KB per client).
func (t *Target) Dialer(configure func(*pgx.ConnConfig)) Dialer {
	cfgs := t.configs(configure)
	return func(ctx context.Context) (*pgx.Conn, error) {
		c := cfgs.cur()
		conn, err := pgx.ConnectConfig(ctx, c)
		cfgs.connected(c, connOf(conn), err)
		return conn, err
	}
}

// PgConnDialer is Dialer's for connections of pgconn alone (no pgx.Conn,
// for workload.PgConnWorker). They all share one configuration, never
// copied per connection: pgconn does not change it.
func (t *Target) PgConnDialer(configure func(*pgx.ConnConfig)) PgConnDialer {
	cfgs := t.configs(configure)
	return func(ctx context.Context) (*pgconn.PgConn, error) {
		c := cfgs.cur()
		pc, err := pgconn.ConnectConfig(ctx, &c.Config)
		var nc net.Conn
		if err == nil {
			nc = pc.Conn()
		}
		cfgs.connected(c, nc, err)
		return pc, err
	}
}

// dialConfigs are the configurations of one Dialer: the configured copy
// of Config and, under sslmode=prefer to one host, the same without TLS
// (plain), used once a connection went without it.
type dialConfigs struct {
	plain *pgx.ConnConfig
	c     atomic.Pointer[pgx.ConnConfig]
}

func (t *Target) configs(configure func(*pgx.ConnConfig)) *dialConfigs {
	cfg := t.Config.Copy()
	if configure != nil {
		configure(cfg)
	}
	d := &dialConfigs{plain: plainFallback(cfg)}
	d.c.Store(cfg)
	return d
}

func (d *dialConfigs) cur() *pgx.ConnConfig { return d.c.Load() }

// connected notes a connection made with c, nc its network connection.
func (d *dialConfigs) connected(c *pgx.ConnConfig, nc net.Conn, err error) {
	// A TLS connection's net.Conn is pgx's *tls.Conn (netio wraps plain
	// sockets only).
	if _, isTLS := nc.(*tls.Conn); d.plain != nil && err == nil && c != d.plain && !isTLS {
		d.c.Store(d.plain)
	}
}

// connOf is conn's network connection (nil for none).
func connOf(conn *pgx.Conn) net.Conn {
	if conn == nil {
		return nil
	}
	return conn.PgConn().Conn()
}

// plainFallback is cfg without TLS when cfg tries TLS first and then the
// same host and port without it (sslmode=prefer to one host), else nil.
func plainFallback(cfg *pgx.ConnConfig) *pgx.ConnConfig {
	if cfg.TLSConfig == nil || len(cfg.Fallbacks) != 1 {
		return nil
	}
	if f := cfg.Fallbacks[0]; f.TLSConfig != nil || f.Host != cfg.Host || f.Port != cfg.Port {
		return nil
	}
	p := cfg.Copy()
	p.TLSConfig, p.Fallbacks = nil, nil
	return p
}

// Provider makes a target reachable for a run: connects to an existing
// server, or starts one (and its poolers, replicas) on this host. A new kind
// of target is one Provider.
type Provider interface {
	// Describe names the target before it is provisioned, redacted, for
	// the run spec.
	Describe() string
	// Provision returns the reachable target and how to tear it down
	// (never nil; a no-op where there is nothing to undo).
	Provision(ctx context.Context) (*Target, func(), error)
}

// Creator is implemented by providers that create their target for the
// run (an embedded cluster): such a run is recorded before its target is
// provisioned, and its workload is always loaded.
type Creator interface {
	CreatesTarget() bool
}

// CreatesTarget reports whether p creates its target for the run.
func CreatesTarget(p Provider) bool {
	c, ok := p.(Creator)
	return ok && c.CreatesTarget()
}

// DSN is the provider of an existing server named by a connection
// configuration.
type DSN struct {
	Config *pgx.ConnConfig
	// WaitReady is how long Provision waits for the server to accept
	// connections (0: one attempt).
	WaitReady time.Duration
	// Local says the server runs on this host (--db-host-local).
	Local bool
	// ServerLog is the server's log file, when the user named one.
	ServerLog string
	// Note receives a line when Provision has to wait (may be nil).
	Note func(string)
}

// Describe names the server without its password.
func (d *DSN) Describe() string { return Redacted(d.Config) }

// Provision waits until the server accepts a connection.
func (d *DSN) Provision(ctx context.Context) (*Target, func(), error) {
	conn, err := WaitReadyText(ctx, d.Config, d.WaitReady, d.Note)
	if err != nil {
		return nil, nil, err
	}
	conn.Close(context.Background())
	return &Target{Config: d.Config, Description: d.Describe(), Local: d.Local, ServerLog: d.ServerLog}, func() {}, nil
}
