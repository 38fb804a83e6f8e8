package cli

import (
	"slices"
	"time"

	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/replica"
)

// withReplicas wraps p with the replicas the configuration asks for:
// their lag, catch-up and the sustainable rate are measured
// (internal/target/replica).
func (a *app) withReplicas(p target.Provider, f *runFlags) (target.Provider, error) {
	r := &replicaOf{kind: f.Replica, dsn: f.ReplicaDSN, readDSN: f.ReadDSN, syncTimeout: f.ReplicaSyncTimeout,
		catchUpTimeout: f.CatchUpTimeout, failover: session.Failover{After: f.Failover, Command: f.FailoverCommand,
			External: f.FailoverExternal, Timeout: f.FailoverTimeout}}
	if r.kind != "" && r.dsn != "" && slices.Contains(replica.PairKinds, r.kind) {
		// slony or londiste set up between the primary and a server the user names
		cfg, err := target.ParseDSN(r.dsn, a.getenv)
		if err != nil {
			return nil, usagef("--replica-dsn: %s", err)
		}
		p = &replica.Pair{Inner: p, Kind: r.kind, Standby: cfg, Env: local.Env(a.Env), Notef: a.notef, SyncTimeout: r.syncTimeout}
	} else if r.kind != "" {
		if err := replica.CheckKind(r.kind); err != nil {
			return nil, usagef("%s", err)
		}
		if _, ok := p.(*target.DSN); ok {
			return nil, usagef("--replica %s starts a replica of a local primary (the embedded cluster or --cluster NAME); for a server named by --dsn, start the replica yourself and pass --replica-dsn", r.kind)
		}
		if r.syncTimeout <= 0 {
			return nil, usagef("--replica-sync-timeout must be positive")
		}
		p = &replica.Provider{Inner: p, Kind: r.kind, Env: local.Env(a.Env), Getenv: a.getenv, Notef: a.notef, SyncTimeout: r.syncTimeout}
	}
	if r.dsn != "" && !slices.Contains(replica.PairKinds, r.kind) {
		cfg, err := target.ParseDSN(r.dsn, a.getenv)
		if err != nil {
			return nil, usagef("--replica-dsn: %s", err)
		}
		p = &replica.DSN{Inner: p, Config: cfg}
	}
	if r.readDSN != "" {
		cfg, err := target.ParseDSN(r.readDSN, a.getenv)
		if err != nil {
			return nil, usagef("--read-dsn: %s", err)
		}
		p = &replica.DSN{Inner: p, Config: cfg, Kind: runconfig.ReadReplica}
	}
	if r.failover.After == 0 && (r.failover.Command != "" || r.failover.External) {
		return nil, usagef("--failover-command and --failover-external go with --failover DURATION")
	}
	if r.failover.After != 0 && r.kind == "" && r.dsn == "" {
		return nil, usagef("--failover needs a standby to promote: --replica streaming, or --replica-dsn STANDBY")
	}
	if r.failover.After != 0 && r.kind != "" && r.kind != "streaming" {
		return nil, usagef("--failover promotes a streaming standby (--replica streaming or --replica-dsn), not a %s replica", r.kind)
	}
	if r.catchUpTimeout <= 0 {
		return nil, usagef("--catch-up-timeout must be positive")
	}
	return p, nil
}

// replicaOf is the replica part of a run's configuration.
type replicaOf struct {
	kind, dsn, readDSN          string
	syncTimeout, catchUpTimeout time.Duration
	failover                    session.Failover
}
