package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
)

// targetFlags name the database to work on.
type targetFlags struct {
	dsn       string
	cluster   string
	waitReady time.Duration
}

func (t *targetFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&t.dsn, "dsn", "", "target database: libpq keyword string or postgres:// URL (PG* variables and ~/.pgpass apply)")
	f.StringVar(&t.cluster, "cluster", "", "use the local cluster `NAME`, as started by 'pgarena cluster start --name NAME'")
	f.DurationVar(&t.waitReady, "wait-ready", 0, "wait up to this long for the server to accept connections")
}

// runTarget is the target part of a run's configuration.
func runTarget(c *runconfig.Config) *targetFlags {
	return &targetFlags{dsn: c.DSN, cluster: c.Cluster, waitReady: c.WaitReady}
}

// explicit reports whether the user named a target, by flag or by the
// environment (PGHOST, PGDATABASE, PGSERVICE), as opposed to wanting the
// embedded cluster.
func (a *app) explicitTarget(t *targetFlags) bool {
	return t.dsn != "" || t.cluster != "" || a.getenv("PGHOST") != "" || a.getenv("PGDATABASE") != "" ||
		a.getenv("PGSERVICE") != ""
}

// provider maps the target flags to a target provider: --cluster, else
// --dsn (or PG* variables). The embedded cluster is runProvider's.
func (a *app) provider(t *targetFlags, dbHostLocal bool, serverLog string) (target.Provider, error) {
	if t.cluster != "" {
		if t.dsn != "" {
			return nil, usagef("give either --dsn or --cluster, not both")
		}
		if err := local.CheckName(t.cluster); err != nil {
			return nil, usagef("%s", err)
		}
		return &local.Named{Name: t.cluster, Env: a.Env, Getenv: a.getenv}, nil
	}
	cfg, err := target.ParseDSN(t.dsn, a.getenv)
	if err != nil {
		return nil, usagef("%s", err)
	}
	return &target.DSN{Config: cfg, WaitReady: t.waitReady, Local: dbHostLocal, ServerLog: serverLog,
		Note: func(s string) { a.notef("%s", s) }}, nil
}

// runProvider is the provider of a run: the named target, or an embedded
// cluster when none is named.
func (a *app) runProvider(f *runFlags, clients int) (target.Provider, error) {
	t := runTarget(&f.Config)
	if a.explicitTarget(t) {
		p, err := a.provider(t, f.DBHostLocal, f.ServerLog)
		if err != nil {
			return nil, err
		}
		return a.withReplicas(p, f)
	}
	bin, err := local.FindBinaries(f.PgBin, a.Env)
	if err != nil {
		if f.PgBin != "" {
			err = fmt.Errorf("%w, or install PostgreSQL (apt-get install postgresql) and leave out --pg-bin, or use --dsn to benchmark an existing server", err)
		}
		return nil, err
	}
	settings, err := parsePgSet(f.PgSet)
	if err != nil {
		return nil, err
	}
	return a.withReplicas(&local.Ephemeral{Bin: bin, Settings: settings, MinConnections: clients + 20, Keep: f.KeepCluster,
		Env: a.Env, Notef: a.notef, Getenv: a.getenv}, f)
}

// provision reaches the explicit target of init, check and drop.
func (a *app) provision(ctx context.Context, t *targetFlags) (*target.Target, func(), error) {
	p, err := a.provider(t, false, "")
	if err != nil {
		return nil, nil, err
	}
	tg, teardown, err := p.Provision(ctx)
	if err != nil {
		return nil, nil, provisionErr(err)
	}
	return tg, teardown, nil
}

// provisionErr makes a named cluster that is missing or stopped bad input.
func provisionErr(err error) error {
	if errors.Is(err, local.ErrNoCluster) || errors.Is(err, local.ErrNotRunning) {
		return usagef("%s", err)
	}
	return err
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
