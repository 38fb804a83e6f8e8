package runconfig

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/target/pooler"
	"github.com/pgarena/pgarena/internal/target/replica"
	"github.com/pgarena/pgarena/internal/workload"
)

// AddFlags defines the run flags on fl, bound to c's fields, and sets c to
// their defaults. The command line attaches fl to its run command.
func (c *Config) AddFlags(fl *pflag.FlagSet) {
	c.targetFlags(fl)
	c.poolerFlags(fl)
	c.segmentFlags(fl)
	c.loadFlags(fl)
	c.replicaFlags(fl)
	c.runFlags(fl)
	c.pgbenchFlags(fl)
	fl.SetNormalizeFunc(NormalizePgbench)
}

// bind is a flag set bound to c's fields without resetting them.
func (c *Config) bind() *pflag.FlagSet {
	saved := *c
	fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
	c.AddFlags(fl)
	*c = saved
	return fl
}

func (c *Config) targetFlags(fl *pflag.FlagSet) {
	fl.StringVar(&c.DSN, "dsn", "", "target database: libpq keyword string or postgres:// URL (PG* variables and ~/.pgpass apply)")
	fl.StringVar(&c.Cluster, "cluster", "", "use the local cluster `NAME`, as started by 'pgarena cluster start --name NAME'")
	fl.DurationVar(&c.WaitReady, "wait-ready", 0, "wait up to this long for the server to accept connections")
	fl.StringVar(&c.PgBin, "pg-bin", "", "PostgreSQL server binaries for the embedded cluster (default: $PGARENA_PG_BIN, else the highest version found)")
	workload.StringArrayVarP(fl, &c.PgSet, "pg-set", "", "server setting for the embedded cluster, key=value (repeatable)")
	fl.BoolVar(&c.KeepCluster, "keep-cluster", false, "keep the embedded cluster (running) after the run and print how to reach it")
}

func (c *Config) poolerFlags(fl *pflag.FlagSet) {
	fl.StringVar(&c.Via, "via", "", "run through a pooler started for the run, in front of the target: pgbouncer[:transaction|session|statement], haproxy (TCP proxy, no pooling) or pgpool (one process per client)")
	c.PoolSize = nil
	fl.Var(optional[int]{&c.PoolSize, strconv.Atoi}, "pool-size", "server connections the --via pooler keeps at most (default 20)")
	fl.DurationVar(&c.PoolerReadyTimeout, "pooler-ready-timeout", pooler.DefaultReadyTimeout, "wait at most this long for the --via pooler to pass a query to the server")
	fl.StringVar(&c.PoolerAdminDSN, "pooler-admin-dsn", "", "the admin console of the pooler --dsn goes through (pgbouncer, odyssey): its SHOW POOLS and SHOW STATS are sampled")
}

func (c *Config) segmentFlags(fl *pflag.FlagSet) {
	fl.StringVar(&c.Segment, "segment", "", "run only segment i of N of the run (i/N; /N takes i from JOB_COMPLETION_INDEX), with --start-at: its share of the clients and open-loop arrivals; merge the segments' runs with pgarena merge")
	fl.StringVar(&c.StartAt, "start-at", "", "start measuring at this time (RFC 3339, e.g. 2026-12-01T10:00:00Z; ahead, at most 24h), so segments on several machines share interval boundaries")
	fl.StringVar(&c.SegmentOf, "segment-of", "", "the whole run's identity, the same on every segment, recorded so that pgarena merge joins only segments of one run (default: the --start-at time; --agents and pgarena k8s set a unique one)")
	c.Agents = nil
	fl.Var(optional[int]{&c.Agents, strconv.Atoi}, "agents", "run as N local child processes, each a --segment, merged into one run at the end")
	fl.StringVar(&c.SegmentIDFile, "segment-id-file", "", "write the run id to this file once the run is recorded (used by --agents)")
	_ = fl.MarkHidden("segment-id-file")
}

func (c *Config) loadFlags(fl *pflag.FlagSet) {
	fl.StringVarP(&c.Clients, "clients", "c", "1", "concurrent clients, one connection each; a list (1,2,4,8) runs a sweep, one step per count")
	fl.StringVarP(&c.Rate, "rate", "R", "", "open loop: transactions per second (Poisson arrivals), a list (100,200,400) runs a sweep")
	fl.StringVar(&c.Schedule, "schedule", "", "open loop rate schedule: line(from,to,dur) const(rate,dur) step(from,to,step,dur), concatenated")
	fl.StringVar(&c.Arrival, "arrival", driver.ArrivalPoisson, "open loop arrivals: poisson or uniform")
	fl.VarP(millis{&c.LatencyLimit}, "latency-limit", "L", "open loop: skip transactions already later than this, count those finishing later (ms or 50ms, 1s)")
	fl.Var(seconds{&c.Ramp}, "ramp", "start clients one after another over this time")
	fl.Var(seconds{&c.Warmup}, "warmup", "flag the first part of the run as warm-up: recorded, excluded from the summary")
	workload.StringArrayVarP(fl, &c.Autostop, "autostop", "", "stop the run when a rule holds, e.g. 'errors>25/s for 10s', 'p95>500ms for 10s', 'tps<10 for 30s' (repeatable; exit code 3)")
	c.LatencyLimit, c.Ramp, c.Warmup = 0, 0, 0
}

func (c *Config) replicaFlags(fl *pflag.FlagSet) {
	fl.StringVar(&c.Replica, "replica", "", "start a replica of the local primary (embedded or --cluster): streaming, logical, pglogical, slony or londiste (slony and londiste with --replica-dsn: set up between the primary and that server); lag, catch-up and sustainable tps are reported")
	fl.StringVar(&c.ReplicaDSN, "replica-dsn", "", "a replica you run (any replication system; it must replicate the table pgarena_heartbeat): lag, catch-up and sustainable tps are reported")
	fl.StringVar(&c.ReadDSN, "read-dsn", "", "send the workload's read-only transactions (tpcc order-status and stock-level, tpcb -S) to this replica, as a second client group; it must replicate pgarena_heartbeat (its lag is measured)")
	fl.DurationVar(&c.ReplicaSyncTimeout, "replica-sync-timeout", replica.DefaultSyncTimeout, "wait at most this long for a --replica logical or pglogical to copy the loaded tables")
	fl.Var(positive{seconds{&c.Failover}}, "failover", "stop the primary `AFTER` into the measured time (counted from when the clients are connected and any --warmup is over; less than -T; the summary's fault_at_s), promote its standby (--replica streaming or --replica-dsn) and report the downtime and the acknowledged commits lost; a run that stops before AFTER has no fault")
	fl.StringVar(&c.FailoverCommand, "failover-command", "", "with --failover: the command (sh -c) that stops the primary; default: an immediate shutdown of the embedded cluster")
	fl.BoolVar(&c.FailoverExternal, "failover-external", false, "with --failover: do not promote the standby, wait for your orchestrator to")
	fl.DurationVar(&c.FailoverTimeout, "failover-timeout", replica.DefaultFailoverTimeout, "with --failover: wait at most this long for the promotion, and then for the first commit on the new primary")
	fl.DurationVar(&c.CatchUpTimeout, "catch-up-timeout", session.DefaultCatchUpTimeout, "after the load, wait at most this long for the replicas to catch up")
}

func (c *Config) runFlags(fl *pflag.FlagSet) {
	c.Progress, c.SampleInterval, c.Time, c.SeedFrom = 10*time.Second, time.Second, nil, "" // before their flags: help shows them
	fl.IntVarP(&c.Jobs, "jobs", "j", 0, "worker threads (caps GOMAXPROCS; default: all cores); clamped to --clients")
	fl.VarP(optional[time.Duration]{&c.Time, parseSeconds}, "time", "T", "run for this long (seconds or 30s, 5m, 1h; default 60s unless -t); per step in a sweep")
	fl.IntVarP(&c.Transactions, "transactions", "t", 0, "transactions per client (instead of -T)")
	fl.DurationVar(&c.DrainTimeout, "drain-timeout", driver.DefaultDrain, "transactions still running at the end of the measured time may finish within this long (the drain, not measured), then are cancelled; 0 cancels them at once")
	fl.VarP(seconds{&c.Progress}, "progress", "P", "print a progress line every this many seconds (0: off)")
	fl.StringVarP(&c.Protocol, "protocol", "M", "", "query protocol: simple, extended or prepared (default: simple; tpcc, ycsb: prepared)")
	fl.BoolVarP(&c.Connect, "connect", "C", false, "open a new connection for every transaction")
	fl.IntVar(&c.MaxTries, "max-tries", 1, "tries per transaction on serialization failure or deadlock (retries are counted)")
	fl.StringVar(&c.Label, "label", "", "label recorded with the run (for listing and comparing)")
	workload.StringArrayVarP(fl, &c.SessionSet, "session-set", "", "session setting key=value on every connection of the workload's clients (repeatable); group:key=value for one client group only (chbench: olap:work_mem=256MB); recorded with the run")
	workload.StringArrayVarP(fl, &c.WorkerDSN, "worker-dsn", "", "a Citus worker to sample (repeatable), in place of the coordinator's workers at their pg_dist_node addresses with --dsn's credentials")
	SeedVar(fl, &c.Seed, &c.SeedFrom, "random seed of the clients' streams and of generated data (recorded; same seed, same run)")
	fl.BoolVar(&c.JSON, "json", false, "print the final summary as JSON on stdout")
	var kinds []string
	for _, k := range output.Kinds() {
		kinds = append(kinds, k.Usage+": "+k.Help)
	}
	workload.StringArrayVarP(fl, &c.Out, "out", "", "also stream the run to an output (repeatable; the results directory is always written): "+strings.Join(kinds, "; "))
	fl.BoolVarP(&c.ReportPerCommand, "report-per-command", "r", false, "report each script command's mean latency, failures and retries in the summary (script workloads: tpcb, script)")
	fl.StringVar(&c.Results, "results", "", "results directory (default $PGARENA_RESULTS or ./pgarena-results)")
	fl.DurationVar(&c.Interval, "interval", time.Second, "length of a recorded interval")
	fl.BoolVar(&c.Init, "init", false, "initialise the workload before running (always on for the embedded cluster)")
	fl.IntVar(&c.LoadWorkers, "load-workers", runtime.NumCPU(), "connections loading data in parallel when initialising")
	fl.BoolVar(&c.Check, "check", false, "run the workload's consistency check after the run")
	fl.Var(seconds{&c.SampleInterval}, "sample-interval", "sample server and host statistics this often (0: off)")
	fl.StringVar(&c.ServerLog, "server-log", "", "server log file to scan for ERROR/FATAL/PANIC during the run (automatic for the embedded cluster)")
	fl.BoolVar(&c.DBHostLocal, "db-host-local", false, "the database runs on this host: its disk and CPU samples describe the server (implied for the embedded cluster)")
	fl.Float64Var(&c.MaxErrorRate, "max-error-rate", 100*session.DefaultMaxErrorRate, "percent of failed transactions above which the run is degraded (status degraded, exit code 1)")
	fl.BoolVar(&c.ProceedWithConnected, "proceed-with-connected", false, "when the server refuses some clients' first connections (too many clients), run with those that connected instead of stopping with exit code 1")
	fl.StringVar(&c.CPUProfile, "cpu-profile", "", "write a Go CPU profile of pgarena itself to this file (for pgarena's developers)")
	fl.StringVar(&c.NetIO, "net-io", string(netio.Default), "clients' socket I/O: raw (netpoller, raw system calls), std (Go's net.Conn) or blocking (for pgarena's developers)")
	fl.BoolVar(&c.FixedProcs, "fixed-procs", false, "keep GOMAXPROCS at -j while clients run instead of adding Ps as they need CPU (for pgarena's developers)")
	for _, name := range []string{"cpu-profile", "net-io", "fixed-procs"} {
		_ = fl.MarkHidden(name)
	}
}

// pgbenchFlags are pgbench's benchmarking options that pgarena's own flags
// do not cover (the command line honours, notes or refuses them).
func (c *Config) pgbenchFlags(fl *pflag.FlagSet) {
	fl.BoolVarP(&c.Log, "log", "l", false, "write pgbench's per-transaction log (pgbench_log.PID, one file per -j thread) in the current directory")
	fl.StringVar(&c.LogPrefix, "log-prefix", "pgbench_log", "file name prefix of the -l logs (may hold a directory)")
	c.AggregateInterval, c.SamplingRate = nil, nil
	fl.Var(optional[int]{&c.AggregateInterval, strconv.Atoi}, "aggregate-interval", "with -l: write pgbench's aggregated log, one line per this many seconds")
	fl.Var(optional[float64]{&c.SamplingRate, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }}, "sampling-rate", "with -l: log this fraction of the transactions (0.01 for 1%)")
	fl.BoolVar(&c.ProgressTimestamp, "progress-timestamp", false, "progress lines show the Unix epoch time instead of the time since the start")
	fl.BoolVar(&c.FailuresDetailed, "failures-detailed", false, "report serialization and deadlock failures apart in the summary and the -l logs (pgbench's lines and columns)")
	fl.BoolVar(&c.VerboseErrors, "verbose-errors", false, "print a line for each failed transaction with what the server said (at most 20 a second)")
	fl.BoolVarP(&c.NoVacuum, "no-vacuum", "n", false, "accepted for pgbench's sake: pgarena never vacuums before a run")
	fl.BoolVarP(&c.VacuumAll, "vacuum-all", "v", false, "pgbench's vacuum before the run: refused (see the message)")
	fl.BoolVarP(&c.Initialize, "initialize", "i", false, "pgbench's init mode: refused (use pgarena init)")
	fl.BoolVar(&c.ExitOnAbort, "exit-on-abort", false, "pgbench's exit on the first client error: refused (use --autostop)")
	for _, name := range []string{"vacuum-all", "initialize", "exit-on-abort"} {
		_ = fl.MarkHidden(name)
	}
}

// NormalizePgbench maps pgbench's long names onto pgarena's (--client=950
// is --clients=950).
func NormalizePgbench(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	switch name {
	case "client":
		name = "clients"
	case "random-seed":
		name = "seed"
	}
	return pflag.NormalizedName(name)
}

// seconds is a duration flag that also takes a bare number of seconds, as
// pgbench's -T and -P do: "60", "60s", "5m", "1h30m".
type seconds struct{ d *time.Duration }

func (s seconds) String() string {
	if s.d == nil || *s.d == 0 {
		return "0"
	}
	if *s.d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(*s.d/time.Second))
	}
	return s.d.String()
}

func (s seconds) Set(v string) error {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n < 0 {
			return fmt.Errorf("must not be negative")
		}
		*s.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("not a duration (use seconds or a unit: 30s, 5m, 1h)")
	}
	if d < 0 {
		return fmt.Errorf("must not be negative")
	}
	*s.d = d
	return nil
}

func (s seconds) Type() string { return "duration" }

// positive is a seconds flag that must be more than 0.
type positive struct{ seconds }

func (p positive) Set(v string) error {
	var d time.Duration
	if err := (seconds{&d}).Set(v); err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("must be more than 0")
	}
	*p.d = d
	return nil
}

func parseSeconds(v string) (time.Duration, error) {
	var d time.Duration
	err := seconds{&d}.Set(v)
	return d, err
}

// optional is a flag whose value is nil until given, so that giving zero
// can be told from not giving it.
type optional[T any] struct {
	p     **T
	parse func(string) (T, error)
}

func (o optional[T]) String() string {
	if *o.p == nil {
		return ""
	}
	if d, ok := any(**o.p).(time.Duration); ok {
		return seconds{&d}.String()
	}
	return fmt.Sprint(**o.p)
}

func (o optional[T]) Set(v string) error {
	x, err := o.parse(strings.TrimSpace(v))
	if err != nil {
		if _, ok := any(x).(time.Duration); ok {
			return err
		}
		return fmt.Errorf("not a number")
	}
	*o.p = &x
	return nil
}

func (o optional[T]) Type() string {
	var z T
	if _, ok := any(z).(time.Duration); ok {
		return "duration"
	}
	return fmt.Sprintf("%T", z)
}

// millis is a duration flag whose bare numbers are milliseconds, as
// pgbench's -L.
type millis struct{ d *time.Duration }

func (m millis) String() string {
	if m.d == nil || *m.d == 0 {
		return "0"
	}
	return m.d.String()
}

func (m millis) Set(v string) error {
	if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
		if n < 0 {
			return fmt.Errorf("must not be negative")
		}
		*m.d = time.Duration(n * float64(time.Millisecond))
		return nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		return fmt.Errorf("not a duration (milliseconds, or 50ms, 1s)")
	}
	*m.d = d
	return nil
}

func (m millis) Type() string { return "duration" }

// seedValue is --seed (pgbench: --random-seed): an unsigned integer, or
// "time" (the current time in microseconds) or "rand" (a random number),
// as pgbench's --random-seed. The seed used is what the run records.
type seedValue struct {
	seed *uint64
	from *string // "time" or "rand" when the seed was drawn
}

func (s seedValue) String() string { return strconv.FormatUint(*s.seed, 10) }

func (s seedValue) Set(v string) error {
	switch v = strings.TrimSpace(v); v {
	case "time":
		*s.seed = uint64(time.Now().UnixMicro())
	case "rand":
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		*s.seed = binary.LittleEndian.Uint64(b[:])
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("use an unsigned integer, time or rand")
		}
		*s.seed = n
		*s.from = ""
		return nil
	}
	*s.from = v
	return nil
}

func (s seedValue) Type() string { return "seed" }

// SeedVar adds --seed with pgbench's --random-seed values (default 1).
func SeedVar(fl *pflag.FlagSet, seed *uint64, from *string, usage string) {
	*seed = 1
	fl.Var(seedValue{seed, from}, "seed", usage+"; pgbench's --random-seed: an integer, time or rand (the seed used is recorded)")
	fl.SetNormalizeFunc(NormalizePgbench)
}

// Override sets c's keys from the run flags given (Changed) in fl, a flag
// set with the run flags (a rerun's overrides, say).
func (c *Config) Override(fl *pflag.FlagSet) error {
	bound := c.bind()
	var err error
	fl.Visit(func(f *pflag.Flag) {
		b := bound.Lookup(f.Name)
		if b == nil || err != nil {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			err = b.Value.(pflag.SliceValue).Replace(sv.GetSlice())
			return
		}
		err = b.Value.Set(f.Value.String())
	})
	return err
}
