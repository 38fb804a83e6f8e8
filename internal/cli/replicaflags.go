package cli

import (
	"math"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/replica"
	"github.com/pgarena/pgarena/internal/workload"
)

// replicaFlags add replicas to a run's target: their lag, catch-up and
// the sustainable rate are measured (internal/target/replica).
type replicaFlags struct {
	kind           string
	dsn            string
	readDSN        string
	catchUpTimeout time.Duration
	syncTimeout    time.Duration
	failover       session.Failover
}

func (r *replicaFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&r.kind, "replica", "", "start a replica of the local primary (embedded or --cluster): streaming, logical, pglogical, slony or londiste (slony and londiste with --replica-dsn: set up between the primary and that server); lag, catch-up and sustainable tps are reported")
	fl.StringVar(&r.dsn, "replica-dsn", "", "a replica you run (any replication system; it must replicate the table pgarena_heartbeat): lag, catch-up and sustainable tps are reported")
	fl.StringVar(&r.readDSN, "read-dsn", "", "send the workload's read-only transactions (tpcc order-status and stock-level, tpcb -S) to this replica, as a second client group; it must replicate pgarena_heartbeat (its lag is measured)")
	fl.DurationVar(&r.syncTimeout, "replica-sync-timeout", replica.DefaultSyncTimeout, "wait at most this long for a --replica logical or pglogical to copy the loaded tables")
	fl.DurationVar(&r.failover.After, "failover", 0, "stop the primary this long into the run, promote its standby (--replica streaming or --replica-dsn) and report the downtime and the acknowledged commits lost")
	fl.StringVar(&r.failover.Command, "failover-command", "", "with --failover: the command (sh -c) that stops the primary; default: an immediate shutdown of the embedded cluster")
	fl.BoolVar(&r.failover.External, "failover-external", false, "with --failover: do not promote the standby, wait for your orchestrator to")
	fl.DurationVar(&r.failover.Timeout, "failover-timeout", replica.DefaultFailoverTimeout, "with --failover: wait at most this long for the promotion, and then for the first commit on the new primary")
	fl.DurationVar(&r.catchUpTimeout, "catch-up-timeout", session.DefaultCatchUpTimeout, "after the load, wait at most this long for the replicas to catch up")
}

// withReplicas wraps p with the replicas the flags ask for.
func (a *app) withReplicas(p target.Provider, r *replicaFlags) (target.Provider, error) {
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
func splitReads(spec *session.Spec, r *replicaFlags) error {
	if r.readDSN == "" {
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

// failoverSpec is the run's --failover, nil without one.
func (r *replicaFlags) failoverSpec() *session.Failover {
	if r.failover.After == 0 {
		return nil
	}
	f := r.failover
	return &f
}
