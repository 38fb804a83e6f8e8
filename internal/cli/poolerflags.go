package cli

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/pooler"
)

// poolerFlags put a pooler between the clients and the target (run only).
type poolerFlags struct {
	via      string
	poolSize int
	adminDSN string
	ready    time.Duration
}

func (p *poolerFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&p.via, "via", "", "run through a pooler started for the run, in front of the target: pgbouncer[:transaction|session|statement], haproxy (TCP proxy, no pooling) or pgpool (one process per client)")
	fl.IntVar(&p.poolSize, "pool-size", 0, "server connections the --via pooler keeps at most (default 20)")
	fl.DurationVar(&p.ready, "pooler-ready-timeout", pooler.DefaultReadyTimeout, "wait at most this long for the --via pooler to pass a query to the server")
	fl.StringVar(&p.adminDSN, "pooler-admin-dsn", "", "the admin console of the pooler --dsn goes through (pgbouncer, odyssey): its SHOW POOLS and SHOW STATS are sampled")
}

// viaPooler wraps the run's provider in the pooler the flags name.
func (a *app) viaPooler(p target.Provider, f *runFlags, clients int) (target.Provider, error) {
	pf := &f.pooler
	switch {
	case pf.via == "" && pf.adminDSN == "":
		if pf.poolSize != 0 {
			return nil, usagef("--pool-size is the pool of a --via pooler: give --via too")
		}
		return p, nil
	case pf.via != "" && pf.adminDSN != "":
		return nil, usagef("give either --via (a pooler started for the run) or --pooler-admin-dsn (one you run), not both")
	case pf.adminDSN != "":
		if !a.explicitTarget(&f.target) {
			return nil, usagef("--pooler-admin-dsn is the console of the pooler --dsn goes through: give --dsn too")
		}
		cfg, err := target.ParseDSN(pf.adminDSN, a.getenv)
		if err != nil {
			return nil, usagef("--pooler-admin-dsn: %s", err)
		}
		return &pooler.External{Inner: p, Admin: cfg}, nil
	}
	kind, mode, _ := strings.Cut(pf.via, ":")
	if pf.poolSize < 0 {
		return nil, usagef("--pool-size must be at least 1 (got %d)", pf.poolSize)
	}
	if pf.ready <= 0 {
		return nil, usagef("--pooler-ready-timeout must be positive")
	}
	pp, err := pooler.New(p, pooler.Options{Kind: kind, Mode: mode, PoolSize: pf.poolSize, MaxClients: clients,
		Env: a.Env, Notef: a.notef, ReadyTimeout: pf.ready})
	if err != nil {
		return nil, usagef("--via %s: %s", pf.via, err)
	}
	if !pp.Pools() && pf.poolSize != 0 {
		a.notef("%s keeps one server connection per client: --pool-size is ignored", kind)
	}
	if err := pp.CheckQueryMode(f.protocol); err != nil {
		return nil, usagef("%s", err)
	}
	return pp, nil
}
