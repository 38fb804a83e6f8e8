package pooler

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/target"
)

// pgbouncer: a pooler of server connections per database and user, in
// session, transaction or statement mode. Every database name goes to the
// same-named database on the server ("*"); clients are trusted on the
// private socket, and pgbouncer logs in to the server with the user's
// password from its auth file.
type pgbouncer struct{}

func (pgbouncer) program() (string, string, string) { return "pgbouncer", "pgbouncer", "--version" }
func (pgbouncer) modes() []string                   { return []string{"transaction", "session", "statement"} }
func (pgbouncer) pools() bool                       { return true }

func (pgbouncer) configure(s setup) (launch, error) {
	host, port := s.serverAddr()
	keys := []string{"listen_addr", "listen_port", "unix_socket_dir", "auth_type", "auth_file", "pool_mode",
		"default_pool_size", "min_pool_size", "reserve_pool_size", "max_client_conn", "max_db_connections",
		"server_tls_sslmode", "ignore_startup_parameters", "admin_users", "stats_users", "logfile", "pidfile",
		"log_connections", "log_disconnections", "log_stats", "stats_period"}
	tls := "disable"
	if !strings.HasPrefix(host, "/") {
		tls = "prefer"
	}
	set := map[string]string{
		"listen_addr":               "",
		"listen_port":               strconv.Itoa(s.port),
		"unix_socket_dir":           s.dir,
		"auth_type":                 "trust",
		"auth_file":                 filepath.Join(s.dir, "users.txt"),
		"pool_mode":                 s.mode,
		"default_pool_size":         strconv.Itoa(s.poolSize),
		"min_pool_size":             "0",
		"reserve_pool_size":         "0",
		"max_client_conn":           strconv.Itoa(s.maxClients),
		"max_db_connections":        "0",
		"server_tls_sslmode":        tls,
		"ignore_startup_parameters": "extra_float_digits",
		"admin_users":               s.server.User,
		"stats_users":               s.server.User,
		"logfile":                   filepath.Join(s.dir, "pgbouncer.log"),
		"pidfile":                   filepath.Join(s.dir, "pgbouncer.pid"),
		"log_connections":           "0",
		"log_disconnections":        "0",
		"log_stats":                 "0",
		"stats_period":              "1", // SHOW STATS totals move every second, not every minute
	}
	ini := fmt.Sprintf("[databases]\n* = host=%s port=%d\n[pgbouncer]\n", host, port) + settingsText(keys, set)
	users := quoteAuth(s.server.User) + " " + quoteAuth(s.server.Password) + "\n"
	rec := map[string]string{"server": fmt.Sprintf("host=%s port=%d", host, port)}
	for k, v := range set {
		rec[k] = v
	}
	return launch{
		files:  map[string]string{"pgbouncer.ini": ini, "users.txt": users},
		args:   []string{filepath.Join(s.dir, "pgbouncer.ini")},
		stop:   syscall.SIGINT, // immediate shutdown
		pooler: target.Pooler{Kind: "pgbouncer", Mode: s.mode, PoolSize: s.poolSize, Settings: rec},
		admin:  func(c *pgx.ConnConfig) *pgx.ConnConfig { return adminConfig(c, "pgbouncer") },
	}, nil
}

// quoteAuth quotes a user name or password for pgbouncer's auth file.
func quoteAuth(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
