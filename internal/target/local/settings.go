package local

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30

	// confFile holds pgarena's settings inside the data directory. It is
	// included from postgresql.conf and rewritten at every start.
	confFile = "pgarena.conf"
)

// Defaults returns the default server settings for a machine with memBytes of
// memory (0 or less: unknown, small fixed sizes are used) and clients that
// need minConns connections: shared_buffers 25% of memory capped at 8GB,
// effective_cache_size 50%, maintenance_work_mem 1/16 (64MB..2GB),
// max_connections max(100, minConns), a larger WAL and longer checkpoints,
// checkpoint and lock-wait logging, and listening on 127.0.0.1 only.
// fsync, synchronous_commit and full_page_writes keep PostgreSQL's defaults
// so that numbers are honest. port and unix_socket_directories are not here:
// Start sets them.
func Defaults(memBytes int64, minConns int) map[string]string {
	sharedBuffers, cacheSize, maintenance := 128*mib, 4*gib, 64*mib
	if memBytes > 0 {
		sharedBuffers = clamp(memBytes/4, 16*mib, 8*gib)
		cacheSize = max(memBytes/2, sharedBuffers)
		maintenance = clamp(memBytes/16, 64*mib, 2*gib)
	}
	return map[string]string{
		"listen_addresses":             "127.0.0.1",
		"max_connections":              strconv.Itoa(max(100, minConns)),
		"shared_buffers":               megabytes(sharedBuffers),
		"effective_cache_size":         megabytes(cacheSize),
		"maintenance_work_mem":         megabytes(maintenance),
		"max_wal_size":                 "4GB",
		"min_wal_size":                 "1GB",
		"checkpoint_timeout":           "15min",
		"checkpoint_completion_target": "0.9",
		"logging_collector":            "off",
		"log_line_prefix":              "%m [%p] ",
		"log_checkpoints":              "on",
		"log_lock_waits":               "on",
	}
}

func clamp(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

func megabytes(b int64) string { return strconv.FormatInt(b/mib, 10) + "MB" }

// MemoryBytes returns the memory available to this process: MemTotal from
// /proc/meminfo, lowered to the cgroup memory limit when there is one. It
// returns 0 when it cannot tell.
func MemoryBytes() int64 {
	total := memTotal()
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		limit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || limit <= 0 {
			continue // "max": no limit
		}
		if total <= 0 || limit < total {
			total = limit
		}
	}
	return total
}

func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// normalizeSettings validates user settings and lower-cases their names
// (PostgreSQL setting names are case-insensitive).
func normalizeSettings(in map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for k, v := range in {
		name := strings.ToLower(strings.TrimSpace(k))
		if !validSettingName(name) {
			return nil, fmt.Errorf("invalid PostgreSQL setting name %q", k)
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return nil, fmt.Errorf("invalid value for PostgreSQL setting %s: it contains a line break or NUL", name)
		}
		switch name {
		case "port":
			return nil, fmt.Errorf("the PostgreSQL setting port is chosen by pgarena: set the port option instead")
		case "unix_socket_directories", "data_directory", "config_file", "hba_file", "ident_file", "external_pid_file":
			return nil, fmt.Errorf("the PostgreSQL setting %s is managed by pgarena and cannot be overridden", name)
		}
		out[name] = v
	}
	return out, nil
}

func validSettingName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_' || (r >= 'a' && r <= 'z'):
		case i > 0 && (r == '.' || (r >= '0' && r <= '9')):
		default:
			return false
		}
	}
	return true
}

// renderConf renders settings in postgresql.conf syntax, sorted by name,
// every value single-quoted (valid for every setting type).
func renderConf(settings map[string]string) string {
	names := make([]string, 0, len(settings))
	for k := range settings {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# Written by pgarena at every start; edits are lost. ALTER SYSTEM still wins.\n")
	for _, k := range names {
		fmt.Fprintf(&b, "%s = %s\n", k, confQuote(settings[k]))
	}
	return b.String()
}

// confQuote quotes a value for postgresql.conf.
func confQuote(v string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), `'`, `''`) + "'"
}

func copySettings(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
