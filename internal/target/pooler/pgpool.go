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

// pgpool: pgpool-II in raw mode with one backend, no health or streaming
// checks, no load balancing. It does not multiplex: each of its
// num_init_children processes serves one client session at a time over its
// cached server connection, and a client beyond them cannot even log in
// (it waits in the listen queue until its connect timeout). So it gets one
// process per client and a few more (the sampler holds one for the run);
// --pool-size does not apply.
type pgpool struct{}

func (pgpool) program() (string, string, string) { return "pgpool", "pgpool2", "--version" }
func (pgpool) modes() []string                   { return []string{"raw"} }
func (pgpool) pools() bool                       { return false }

func (pgpool) configure(s setup) (launch, error) {
	host, port := s.serverAddr()
	children := s.maxClients
	keys := []string{"backend_clustering_mode", "listen_addresses", "port", "socket_dir", "pcp_listen_addresses",
		"pcp_port", "pcp_socket_dir", "backend_hostname0", "backend_port0", "backend_flag0", "num_init_children",
		"max_pool", "listen_backlog_multiplier", "child_life_time", "connection_life_time", "client_idle_limit",
		"connection_cache", "load_balance_mode", "health_check_period", "sr_check_period", "failover_on_backend_error",
		"use_watchdog", "memory_cache_enabled", "enable_pool_hba", "pool_passwd", "log_destination", "logging_collector",
		"pid_file_name", "logdir"}
	set := map[string]string{
		"backend_clustering_mode":   "'raw'",
		"listen_addresses":          "''",
		"port":                      strconv.Itoa(s.port),
		"socket_dir":                quoteConf(s.dir),
		"pcp_listen_addresses":      "''",
		"pcp_port":                  "9898",
		"pcp_socket_dir":            quoteConf(s.dir),
		"backend_hostname0":         quoteConf(host),
		"backend_port0":             strconv.Itoa(port),
		"backend_flag0":             "'ALWAYS_PRIMARY|DISALLOW_TO_FAILOVER'",
		"num_init_children":         strconv.Itoa(children),
		"max_pool":                  "1",
		"listen_backlog_multiplier": "2",
		"child_life_time":           "0",
		"connection_life_time":      "0",
		"client_idle_limit":         "0",
		"connection_cache":          "on",
		"load_balance_mode":         "off",
		"health_check_period":       "0",
		"sr_check_period":           "0",
		"failover_on_backend_error": "off",
		"use_watchdog":              "off",
		"memory_cache_enabled":      "off",
		"enable_pool_hba":           "off",
		"pool_passwd":               "''",
		"log_destination":           "'stderr'",
		"logging_collector":         "off",
		"pid_file_name":             quoteConf(filepath.Join(s.dir, "pgpool.pid")),
		"logdir":                    quoteConf(s.dir),
	}
	files := map[string]string{"pcp.conf": "", "pool_hba.conf": ""}
	if s.server.Password != "" {
		// pgpool logs in to the server with the user's password.
		set["pool_passwd"] = quoteConf(filepath.Join(s.dir, "pool_passwd"))
		files["pool_passwd"] = s.server.User + ":TEXT" + s.server.Password + "\n"
	}
	files["pgpool.conf"] = settingsText(keys, set)
	rec := map[string]string{}
	for k, v := range set {
		rec[k] = strings.Trim(v, "'")
	}
	return launch{
		files: files,
		args: []string{"-n", "-D", "-f", filepath.Join(s.dir, "pgpool.conf"), "-F", filepath.Join(s.dir, "pcp.conf"),
			"-a", filepath.Join(s.dir, "pool_hba.conf")},
		stop: syscall.SIGINT, // fast shutdown
		pooler: target.Pooler{Kind: "pgpool", Mode: "raw", Settings: rec,
			Note: fmt.Sprintf("no multiplexing: %d pgpool processes, one client session (and server connection) each", children)},
		admin: func(c *pgx.ConnConfig) *pgx.ConnConfig { return adminConfig(c, "") },
	}, nil
}

// quoteConf quotes a string value for pgpool.conf.
func quoteConf(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
