// Package target turns what the user named (a libpq DSN or URL, PG*
// environment variables, an embedded or named local cluster) into
// connections, and describes the server it reaches.
//
// Passwords never leave this package in text: Redacted renders a
// connection's parameters without one.
package target

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/await"
	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/pgtext"
)

// QueryModes are the -M values, as ParseQueryMode takes them.
var QueryModes = []string{"simple", "extended", "prepared"}

// ParseQueryMode maps a -M value to its pgx exec mode: simple is pgbench's
// default (the simple query protocol), extended uses the extended protocol
// with an unnamed statement (one round trip), prepared uses named prepared
// statements cached per connection.
func ParseQueryMode(s string) (pgx.QueryExecMode, error) {
	switch s {
	case "simple":
		return pgx.QueryExecModeSimpleProtocol, nil
	case "extended":
		return pgx.QueryExecModeExec, nil
	case "prepared":
		return pgx.QueryExecModeCacheStatement, nil
	}
	return 0, fmt.Errorf("unknown query mode %q (use simple, extended or prepared)", s)
}

// Dialer opens a new connection to a target, already configured for its
// use (query mode, socket I/O, application_name). The driver's clients and
// the loader's workers dial through one.
type Dialer func(ctx context.Context) (*pgx.Conn, error)

// PgConnDialer opens a new connection of pgconn alone (Target.PgConnDialer).
type PgConnDialer func(ctx context.Context) (*pgconn.PgConn, error)

// ParseDSN parses a libpq keyword string or postgres:// URL; an empty dsn
// means "from PG* environment variables and defaults", as in psql. The PG*
// variables come from getenv (the CLI's Main.Env), for the settings dsn
// leaves out (see withEnv). The error never contains a password.
func ParseDSN(dsn string, getenv func(string) string) (*pgx.ConnConfig, error) {
	full := withEnv(dsn, getenv)
	cfg, err := pgx.ParseConfig(full)
	if err != nil {
		msg := scrub(scrub(err.Error(), full), dsn)
		if getenv != nil {
			if pw := getenv("PGPASSWORD"); pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
		}
		return nil, fmt.Errorf("cannot parse connection string %q: %s", RedactDSN(dsn), msg)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "pgarena"
	}
	// pgx allocates both statement caches at their capacity (512 each by
	// default, ~60 KB per connection): a benchmark's clients run a few
	// dozen statements each, so a smaller cache keeps thousands of
	// clients lean. A capacity the connection string sets is kept.
	if !strings.Contains(full, "statement_cache_capacity") {
		cfg.StatementCacheCapacity = ClientStatementCache
	}
	if !strings.Contains(full, "description_cache_capacity") {
		cfg.DescriptionCacheCapacity = clientDescriptionCache
	}
	return cfg, nil
}

// ClientStatementCache is the capacity of a connection's prepared
// statement cache (-M prepared) unless the connection string sets
// statement_cache_capacity: beyond it the least recently used statement is
// deallocated. The description cache serves only pgx's "cache_describe"
// mode, which -M does not offer: clientDescriptionCache.
const (
	ClientStatementCache   = 64
	clientDescriptionCache = 16
)

// DropUnusedCaches sets the capacity of the statement caches cfg's
// DefaultQueryExecMode never uses to zero, so that pgx allocates none (the
// two maps are ~5 KB per connection at the capacities above: 50 MB at
// 10,000 clients). Only the statement cache serves -M prepared
// ("cache_statement"); the description cache serves "cache_describe" alone.
// For connections that run every statement in their default mode.
func DropUnusedCaches(cfg *pgx.ConnConfig) {
	if cfg.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement {
		cfg.StatementCacheCapacity = 0
	}
	if cfg.DefaultQueryExecMode != pgx.QueryExecModeCacheDescribe {
		cfg.DescriptionCacheCapacity = 0
	}
}

// scrub removes anything that looks like the DSN's password from msg.
func scrub(msg, dsn string) string {
	for _, pw := range passwordsIn(dsn) {
		if pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

var kwPassword = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`) }}

func passwordsIn(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw, url.QueryEscape(pw), url.PathEscape(pw))
		}
	}
	if u, err := url.Parse(dsn); err == nil {
		if pw := u.Query().Get("password"); pw != "" {
			out = append(out, pw)
		}
	}
	for _, m := range kwPassword.Get().FindAllStringSubmatch(dsn, -1) {
		out = append(out, strings.Trim(m[1], "'"))
	}
	return out
}

// RedactDSN returns dsn with any password replaced by xxxxx, for display of
// text that may not even parse.
func RedactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if u.User != nil {
			if _, ok := u.User.Password(); ok {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			}
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	// Not a parseable URL: mask "user:password@" and password= by pattern.
	dsn = urlPassword.Get().ReplaceAllString(dsn, "${1}xxxxx@")
	return kwPassword.Get().ReplaceAllString(dsn, "password=xxxxx")
}

var urlPassword = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`(://[^:/@\s]*:)[^@\s]*@`) }}

// Redacted describes cfg as a keyword string without the password.
func Redacted(cfg *pgx.ConnConfig) string {
	parts := []string{
		"host=" + cfg.Host,
		"port=" + strconv.Itoa(int(cfg.Port)),
		"user=" + cfg.User,
		"dbname=" + cfg.Database,
	}
	keys := make([]string, 0, len(cfg.RuntimeParams))
	for k := range cfg.RuntimeParams {
		if k != "application_name" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+cfg.RuntimeParams[k])
	}
	return strings.Join(parts, " ")
}

// Connect opens one connection with cfg (copied, so callers may reuse cfg)
// under the given application_name.
func Connect(ctx context.Context, cfg *pgx.ConnConfig, appName string) (*pgx.Conn, error) {
	c := cfg.Copy()
	if appName != "" {
		c.RuntimeParams["application_name"] = appName
	}
	// pgarena's own connections (control, loader, checks) may go through a
	// transaction pooler named by --dsn: pgx's named statements
	// (stmtcache_...) would meet other sessions' on a shared server
	// connection (42P05) or be missing on the next one (26000). Unnamed
	// statements with cached descriptions work through any pooler.
	if c.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		c.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
	return pgx.ConnectConfig(ctx, c)
}

// WaitReady connects until the server accepts a connection or wait has
// passed (wait 0 tries once). Refused connections and a server that is
// starting up or full are retried; authentication or DNS failures are not.
// While it waits it reports progress through note (may be nil), with the
// server's answer, at least every 5 s (internal/await).
func WaitReady(ctx context.Context, cfg *pgx.ConnConfig, wait time.Duration, note func(string)) (*pgx.Conn, error) {
	return waitReady(ctx, cfg, wait, note, func(ctx context.Context) (*pgx.Conn, error) { return Connect(ctx, cfg, "") })
}

// WaitReadyText is WaitReady for a connection of pgconn alone (a
// *pgtext.Conn: no pgx.Conn, so no type map is built).
func WaitReadyText(ctx context.Context, cfg *pgx.ConnConfig, wait time.Duration, note func(string)) (*pgtext.Conn, error) {
	return waitReady(ctx, cfg, wait, note, func(ctx context.Context) (*pgtext.Conn, error) {
		pc, err := pgconn.ConnectConfig(ctx, &cfg.Copy().Config)
		if err != nil {
			return nil, err
		}
		return pgtext.New(pc), nil
	})
}

func waitReady[C any](ctx context.Context, cfg *pgx.ConnConfig, wait time.Duration, note func(string), connect func(context.Context) (C, error)) (C, error) {
	var none C
	w := await.Wait{What: Redacted(cfg) + " to accept connections", Timeout: wait, Flag: "--wait-ready"}
	if note != nil {
		w.Notef = func(format string, args ...any) { note(fmt.Sprintf(format, args...)) }
	}
	p := w.Start()
	for {
		conn, err := connect(ctx)
		if err == nil {
			return conn, nil
		}
		class := pgerr.Classify(err)
		retry := class == pgerr.ClassConnectRefused || class == pgerr.ClassAdminShutdown ||
			class == pgerr.ClassStarting || class == pgerr.ClassTooManyConnections || class == pgerr.ClassConnectionLost
		if !retry || p.Expired() || ctx.Err() != nil {
			return none, &ConnectError{Class: class, Target: Redacted(cfg), Err: err, Waited: wait}
		}
		p.Report(fmt.Sprintf("%s: %s", class, pgerr.Describe(err)))
		select {
		case <-time.After(min(500*time.Millisecond, max(p.Left(), 0)+time.Millisecond)):
		case <-ctx.Done():
			return none, &ConnectError{Class: class, Target: Redacted(cfg), Err: ctx.Err(), Waited: wait}
		}
	}
}

// ConnectError is a failure to reach the target, classified.
type ConnectError struct {
	Class  pgerr.ErrorClass
	Target string
	Err    error
	// Waited is the --wait-ready the connection was given (0: none): the
	// hint suggests it only when it was not given
	Waited time.Duration
}

func (e *ConnectError) Error() string {
	hint := ""
	switch e.Class {
	case pgerr.ClassAuth:
		hint = " (check the user and password: --dsn, PGUSER/PGPASSWORD or ~/.pgpass)"
	case pgerr.ClassDNS:
		hint = " (the host name does not resolve)"
	case pgerr.ClassConnectRefused:
		hint = " (is the server running? --wait-ready DURATION waits for it)"
		if e.Waited > 0 {
			hint = fmt.Sprintf(" (is the server running? it did not accept connections within --wait-ready %s)", e.Waited)
		}
	case pgerr.ClassTLS:
		hint = " (" + pgerr.ClassTLS.Advice() + ")"
	case pgerr.ClassStarting:
		hint = " (" + pgerr.ClassStarting.Advice() + ")"
	}
	return fmt.Sprintf("cannot connect to %s: %s: %s%s", e.Target, e.Class, pgerr.Describe(e.Err), hint)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// IsConnectError reports whether err is a ConnectError.
func IsConnectError(err error) bool {
	var ce *ConnectError
	return errors.As(err, &ce)
}

// ServerInfo is what a run records about the server.
type ServerInfo struct {
	Version    string
	VersionNum int
	Settings   map[string]string
}

// KeySettings are the pg_settings recorded with every run.
var KeySettings = []string{
	"max_connections", "shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem",
	"synchronous_commit", "fsync", "full_page_writes", "wal_level", "max_wal_size", "checkpoint_timeout",
	"checkpoint_completion_target", "random_page_cost", "effective_io_concurrency", "max_worker_processes",
	"max_parallel_workers", "huge_pages", "wal_buffers", "default_transaction_isolation", "jit",
	"autovacuum", "server_encoding", "data_checksums", "block_size", "wal_compression", "shared_preload_libraries",
}

// Describe reads the server's version and key settings.
func Describe(ctx context.Context, conn pgtext.Querier) (ServerInfo, error) {
	info := ServerInfo{Settings: map[string]string{}}
	err := conn.QueryRow(ctx, "select version(), current_setting('server_version_num')::int").Scan(&info.Version, &info.VersionNum)
	if err != nil {
		return info, fmt.Errorf("read server version: %w", err)
	}
	want := make(map[string]bool, len(KeySettings))
	for _, k := range KeySettings {
		want[k] = true
	}
	rows, err := conn.Query(ctx, "select name, current_setting(name) from pg_settings")
	if err != nil {
		return info, fmt.Errorf("read pg_settings: %w", err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return info, err
		}
		if want[k] {
			info.Settings[k] = v
		}
	}
	return info, rows.Err()
}
