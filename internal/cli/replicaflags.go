package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/replica"
)

// replicaFlags add replicas to a run's target: their lag, catch-up and
// the sustainable rate are measured (internal/target/replica).
type replicaFlags struct {
	kind           string
	dsn            string
	catchUpTimeout time.Duration
}

func (r *replicaFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&r.kind, "replica", "", "start a replica of the local primary (embedded or --cluster): streaming, logical or pglogical; lag, catch-up and sustainable tps are reported")
	fl.StringVar(&r.dsn, "replica-dsn", "", "a replica you run (any replication system; it must replicate the table pgarena_heartbeat): lag, catch-up and sustainable tps are reported")
	fl.DurationVar(&r.catchUpTimeout, "catch-up-timeout", session.DefaultCatchUpTimeout, "after the load, wait at most this long for the replicas to catch up")
}

// withReplicas wraps p with the replicas the flags ask for.
func (a *app) withReplicas(p target.Provider, r *replicaFlags) (target.Provider, error) {
	if r.kind != "" {
		if err := replica.CheckKind(r.kind); err != nil {
			return nil, usagef("%s", err)
		}
		if _, ok := p.(*target.DSN); ok {
			return nil, usagef("--replica %s starts a replica of a local primary (the embedded cluster or --cluster NAME); for a server named by --dsn, start the replica yourself and pass --replica-dsn", r.kind)
		}
		p = &replica.Provider{Inner: p, Kind: r.kind, Env: local.Env(a.Env), Getenv: a.getenv, Notef: a.notef}
	}
	if r.dsn != "" {
		cfg, err := target.ParseDSN(r.dsn, a.getenv)
		if err != nil {
			return nil, usagef("--replica-dsn: %s", err)
		}
		p = &replica.DSN{Inner: p, Config: cfg}
	}
	if r.catchUpTimeout <= 0 {
		return nil, usagef("--catch-up-timeout must be positive")
	}
	return p, nil
}
