package cli

import (
	"math"
	"time"

	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/replica"
	"github.com/pgarena/pgarena/internal/workload"
)

// withReplicas wraps p with the replicas the configuration asks for:
// their lag, catch-up and the sustainable rate are measured
// (internal/target/replica).
func (a *app) withReplicas(p target.Provider, f *runFlags) (target.Provider, error) {
	r := &replicaOf{kind: f.Replica, dsn: f.ReplicaDSN, readDSN: f.ReadDSN, syncTimeout: f.ReplicaSyncTimeout,
		catchUpTimeout: f.CatchUpTimeout, failover: session.Failover{After: f.Failover, Command: f.FailoverCommand,
			External: f.FailoverExternal, Timeout: f.FailoverTimeout}}
	if r.kind != "" {
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
	if r.dsn != "" {
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
		p = &replica.DSN{Inner: p, Config: cfg, Kind: readReplica}
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

// readReplica is the kind of the replica --read-dsn names.
const readReplica = "read" // as replica.DSN names it

// splitReads makes the run's one client group two when --read-dsn is
// given: the workload's read-only transactions go to the replica (group
// "replica", clients in the mix's proportion, at least one), the rest to
// the primary (group "primary"). A workload whose every transaction reads
// only runs wholly on the replica.
func splitReads(spec *session.Spec, readDSN string) error {
	if readDSN == "" {
		return nil
	}
	g := spec.Groups[0]
	switch {
	case len(spec.Steps) > 1:
		return usagef("--read-dsn runs a client group on the replica beside the primary's: give one client count, not a sweep")
	case !g.Schedule.Empty():
		return usagef("--read-dsn splits closed-loop clients between primary and replica: leave out the open-loop rate")
	}
	sp, ok := g.Workload.(workload.ReadOnlySplitter)
	if !ok {
		return usagef("--read-dsn: workload %s does not say which of its transactions only read", g.Workload.Meta().Name)
	}
	reads, writes, share := sp.SplitReadOnly()
	switch {
	case reads == nil:
		return usagef("--read-dsn: no transaction of %s as configured only reads (tpcb: -S)", g.Workload.Meta().Name)
	case writes == nil:
		g.Replica = readReplica
		spec.Groups[0] = g
		return nil
	case g.Clients < 2:
		return usagef("--read-dsn splits the clients between the primary and the replica: give -c 2 or more")
	}
	nr := min(max(1, int(math.Round(float64(g.Clients)*share))), g.Clients-1)
	w, rd := g, g
	w.Name, w.Workload, w.Clients = "primary", writes, g.Clients-nr
	rd.Name, rd.Workload, rd.Clients, rd.Replica = "replica", reads, nr, readReplica
	spec.Groups = []session.Group{w, rd}
	spec.Steps = []session.Step{{Clients: w.Clients}}
	return nil
}

// replicaOf is the replica part of a run's configuration.
type replicaOf struct {
	kind, dsn, readDSN          string
	syncTimeout, catchUpTimeout time.Duration
	failover                    session.Failover
}

// failoverSpec is the run's --failover, nil without one.
func (f *runFlags) failoverSpec() *session.Failover {
	if f.Failover == 0 {
		return nil
	}
	return &session.Failover{After: f.Failover, Command: f.FailoverCommand, External: f.FailoverExternal, Timeout: f.FailoverTimeout}
}
