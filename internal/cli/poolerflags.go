package cli

import (
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/pooler"
)

// viaPooler wraps the run's provider in the pooler the flags name.
func (a *app) viaPooler(p target.Provider, f *runFlags, clients int) (target.Provider, error) {
	pf := struct {
		via, adminDSN string
		poolSize      int
		ready         time.Duration
	}{f.Via, f.PoolerAdminDSN, runconfig.Val(f.PoolSize), f.PoolerReadyTimeout}
	switch {
	case pf.via == "" && pf.adminDSN == "":
		if pf.poolSize != 0 {
			return nil, usagef("--pool-size is the pool of a --via pooler: give --via too")
		}
		return p, nil
	case pf.via != "" && pf.adminDSN != "":
		return nil, usagef("give either --via (a pooler started for the run) or --pooler-admin-dsn (one you run), not both")
	case pf.adminDSN != "":
		if !a.explicitTarget(runTarget(&f.Config)) {
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
	if err := pp.CheckQueryMode(f.run.Protocol); err != nil {
		return nil, usagef("%s", err)
	}
	return pp, nil
}
