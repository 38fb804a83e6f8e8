package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
)

// targetFlags name the database to work on.
type targetFlags struct {
	dsn         string
	cluster     string
	waitReady   time.Duration
	pgBin       string
	pgSet       []string
	keepCluster bool
}

func (t *targetFlags) add(cmd *cobra.Command, embedded bool) {
	f := cmd.Flags()
	f.StringVar(&t.dsn, "dsn", "", "target database: libpq keyword string or postgres:// URL (PG* variables and ~/.pgpass apply)")
	f.StringVar(&t.cluster, "cluster", "", "use the local cluster `NAME`, as started by 'pgarena cluster start --name NAME'")
	f.DurationVar(&t.waitReady, "wait-ready", 0, "wait up to this long for the server to accept connections")
	if embedded {
		f.StringVar(&t.pgBin, "pg-bin", "", "PostgreSQL server binaries for the embedded cluster (default: highest version found)")
		f.StringArrayVar(&t.pgSet, "pg-set", nil, "server setting for the embedded cluster, key=value (repeatable)")
		f.BoolVar(&t.keepCluster, "keep-cluster", false, "keep the embedded cluster (running) after the run and print how to reach it")
	}
}

// explicit reports whether the user named a target, by flag or by the
// environment (PGHOST, PGDATABASE, PGSERVICE), as opposed to wanting the
// embedded cluster.
func (a *app) explicitTarget(t *targetFlags) bool {
	return t.dsn != "" || t.cluster != "" || a.getenv("PGHOST") != "" || a.getenv("PGDATABASE") != "" ||
		a.getenv("PGSERVICE") != ""
}

// parseTarget parses the user's target without connecting.
func (a *app) parseTarget(t *targetFlags) (*pgx.ConnConfig, error) {
	dsn := t.dsn
	if t.cluster != "" {
		if t.dsn != "" {
			return nil, usagef("give either --dsn or --cluster, not both")
		}
		c, err := local.OpenNamed(t.cluster)
		if err != nil {
			return nil, usagef("%s", err)
		}
		if !c.Running() {
			return nil, usagef("cluster %q is not running (start it with `pgarena cluster start --name %s`)", t.cluster, t.cluster)
		}
		dsn = c.DSN("postgres")
	}
	cfg, err := target.ParseDSN(dsn)
	if err != nil {
		return nil, usagef("%s", err)
	}
	return cfg, nil
}

// connect opens one connection to cfg, waiting --wait-ready if asked.
func (a *app) connect(ctx context.Context, cfg *pgx.ConnConfig, t *targetFlags) (*pgx.Conn, error) {
	return target.WaitReady(ctx, cfg, t.waitReady, func(s string) { a.notef("%s", s) })
}

// parsePgSet turns key=value flags into settings.
func parsePgSet(kvs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usagef("--pg-set %q: expected key=value", kv)
		}
		m[k] = strings.TrimSpace(v)
	}
	return m, nil
}

// startEmbedded starts an ephemeral cluster for a run.
func (a *app) startEmbedded(ctx context.Context, t *targetFlags, bin local.Binaries, minConns int, logPath string) (*local.Cluster, error) {
	settings, err := parsePgSet(t.pgSet)
	if err != nil {
		return nil, err
	}
	a.notef("starting an embedded PostgreSQL %s from %s", bin.Version, bin.Dir)
	return local.Start(ctx, local.Options{
		BinDir:         bin.Dir,
		Settings:       settings,
		MinConnections: minConns,
		LogPath:        logPath,
		Notef:          a.notef,
	})
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func fmtDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return d.String()
}
