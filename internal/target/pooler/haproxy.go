package pooler

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pgarena/pgarena/internal/target"
)

// haproxy: a TCP proxy in front of the server. It does not pool: every
// client keeps its own server connection; it adds a hop (and its queue
// when maxconn is reached). Its statistics come from its stats socket.
type haproxy struct{}

func (haproxy) program() (string, string, string) { return "haproxy", "haproxy", "-v" }
func (haproxy) modes() []string                   { return []string{"tcp"} }
func (haproxy) pools() bool                       { return false }

func (haproxy) configure(s setup) (launch, error) {
	host, port := s.serverAddr()
	server := fmt.Sprintf("%s:%d", host, port)
	if strings.HasPrefix(host, "/") {
		server = filepath.Join(host, fmt.Sprintf(".s.PGSQL.%d", port))
	}
	stats := filepath.Join(s.dir, "haproxy.stat")
	listen := filepath.Join(s.dir, fmt.Sprintf(".s.PGSQL.%d", s.port))
	maxconn := strconv.Itoa(s.maxClients)
	cfg := fmt.Sprintf(`global
    maxconn %[1]s
    stats socket %[2]s mode 600 level user
    pidfile %[3]s
defaults
    mode tcp
    maxconn %[1]s
    timeout connect 10s
    timeout client 24h
    timeout server 24h
listen postgres
    bind %[4]s mode 600
    server postgres %[5]s maxconn %[1]s
`, maxconn, stats, filepath.Join(s.dir, "haproxy.pid"), listen, server)
	return launch{
		files: map[string]string{"haproxy.cfg": cfg},
		args:  []string{"-db", "-f", filepath.Join(s.dir, "haproxy.cfg")},
		stop:  syscall.SIGTERM, // hard stop
		pooler: target.Pooler{Kind: "haproxy", Mode: "tcp", Note: "a TCP proxy: no pooling, one server connection per client",
			StatsSocket: stats, Settings: map[string]string{"mode": "tcp", "maxconn": maxconn, "server": server,
				"timeout connect": "10s", "timeout client": "24h", "timeout server": "24h"}},
	}, nil
}
