package runconfig

import (
	"encoding/json"
	"math"

	"github.com/pgarena/pgarena/internal/metrics"
)

// EncodeJSON is c as JSON (spec.json's "config"; the store indents it),
// byte for byte what encoding/json writes for c, which TestEncodeJSON
// checks for every field. Written by hand: encoding/json's first use of
// Config (its 73 fields' reflection) costs ~0.7 M instructions, 5% of a
// one-transaction run.
func (c *Config) EncodeJSON() ([]byte, error) {
	for _, f := range []*float64{&c.MaxErrorRate, c.SamplingRate} {
		if f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0)) {
			return json.Marshal(c) // its error
		}
	}
	w := metrics.JSONWriter{B: make([]byte, 0, 1024)}
	w.Open()
	c.writeJSON(&w)
	w.Close()
	return w.B, w.Err
}

// writeJSON writes c's members.
func (c *Config) writeJSON(w *metrics.JSONWriter) {
	keyString(w, "workload", c.Workload)
	if len(c.Args) > 0 {
		keyStrings(w, "args", c.Args)
	}
	if len(c.Params) > 0 {
		keyStringMap(w, "params", c.Params)
	}
	if c.DSN != "" {
		keyString(w, "dsn", c.DSN)
	}
	if c.Cluster != "" {
		keyString(w, "cluster", c.Cluster)
	}
	if c.WaitReady != 0 {
		keyInt(w, "wait-ready", int64(c.WaitReady))
	}
	if c.PgBin != "" {
		keyString(w, "pg-bin", c.PgBin)
	}
	if len(c.PgSet) > 0 {
		keyStrings(w, "pg-set", c.PgSet)
	}
	if c.KeepCluster {
		keyBool(w, "keep-cluster", c.KeepCluster)
	}
	if c.Via != "" {
		keyString(w, "via", c.Via)
	}
	if c.PoolSize != nil {
		keyInt(w, "pool-size", int64(*c.PoolSize))
	}
	keyInt(w, "pooler-ready-timeout", int64(c.PoolerReadyTimeout))
	if c.PoolerAdminDSN != "" {
		keyString(w, "pooler-admin-dsn", c.PoolerAdminDSN)
	}
	if c.Segment != "" {
		keyString(w, "segment", c.Segment)
	}
	if c.StartAt != "" {
		keyString(w, "start-at", c.StartAt)
	}
	if c.SegmentOf != "" {
		keyString(w, "segment-of", c.SegmentOf)
	}
	if c.Agents != nil {
		keyInt(w, "agents", int64(*c.Agents))
	}
	if c.SegmentIDFile != "" {
		keyString(w, "segment-id-file", c.SegmentIDFile)
	}
	keyString(w, "clients", c.Clients)
	if c.Rate != "" {
		keyString(w, "rate", c.Rate)
	}
	if c.Schedule != "" {
		keyString(w, "schedule", c.Schedule)
	}
	keyString(w, "arrival", c.Arrival)
	if c.LatencyLimit != 0 {
		keyInt(w, "latency-limit", int64(c.LatencyLimit))
	}
	if c.Ramp != 0 {
		keyInt(w, "ramp", int64(c.Ramp))
	}
	if c.Warmup != 0 {
		keyInt(w, "warmup", int64(c.Warmup))
	}
	if len(c.Autostop) > 0 {
		keyStrings(w, "autostop", c.Autostop)
	}
	if c.Replica != "" {
		keyString(w, "replica", c.Replica)
	}
	if c.ReplicaDSN != "" {
		keyString(w, "replica-dsn", c.ReplicaDSN)
	}
	if c.ReadDSN != "" {
		keyString(w, "read-dsn", c.ReadDSN)
	}
	keyInt(w, "replica-sync-timeout", int64(c.ReplicaSyncTimeout))
	if c.Failover != 0 {
		keyInt(w, "failover", int64(c.Failover))
	}
	if c.FailoverCommand != "" {
		keyString(w, "failover-command", c.FailoverCommand)
	}
	if c.FailoverExternal {
		keyBool(w, "failover-external", c.FailoverExternal)
	}
	keyInt(w, "failover-timeout", int64(c.FailoverTimeout))
	keyInt(w, "catch-up-timeout", int64(c.CatchUpTimeout))
	if c.Jobs != 0 {
		keyInt(w, "jobs", int64(c.Jobs))
	}
	if c.Time != nil {
		keyInt(w, "time", int64(*c.Time))
	}
	if c.Transactions != 0 {
		keyInt(w, "transactions", int64(c.Transactions))
	}
	keyInt(w, "progress", int64(c.Progress))
	keyInt(w, "drain-timeout", int64(c.DrainTimeout))
	if c.Protocol != "" {
		keyString(w, "protocol", c.Protocol)
	}
	if c.Connect {
		keyBool(w, "connect", c.Connect)
	}
	keyInt(w, "max-tries", int64(c.MaxTries))
	if c.Label != "" {
		keyString(w, "label", c.Label)
	}
	if len(c.SessionSet) > 0 {
		keyStrings(w, "session-set", c.SessionSet)
	}
	if len(c.WorkerDSN) > 0 {
		keyStrings(w, "worker-dsn", c.WorkerDSN)
	}
	keyUint(w, "seed", c.Seed)
	if c.JSON {
		keyBool(w, "json", c.JSON)
	}
	if len(c.Out) > 0 {
		keyStrings(w, "out", c.Out)
	}
	if c.ReportPerCommand {
		keyBool(w, "report-per-command", c.ReportPerCommand)
	}
	if c.Results != "" {
		keyString(w, "results", c.Results)
	}
	keyInt(w, "interval", int64(c.Interval))
	if c.Init {
		keyBool(w, "init", c.Init)
	}
	keyInt(w, "load-workers", int64(c.LoadWorkers))
	if c.Check {
		keyBool(w, "check", c.Check)
	}
	keyInt(w, "sample-interval", int64(c.SampleInterval))
	if c.ServerLog != "" {
		keyString(w, "server-log", c.ServerLog)
	}
	if c.DBHostLocal {
		keyBool(w, "db-host-local", c.DBHostLocal)
	}
	keyFloat(w, "max-error-rate", c.MaxErrorRate)
	if c.ProceedWithConnected {
		keyBool(w, "proceed-with-connected", c.ProceedWithConnected)
	}
	if c.CPUProfile != "" {
		keyString(w, "cpu-profile", c.CPUProfile)
	}
	keyString(w, "net-io", c.NetIO)
	if c.FixedProcs {
		keyBool(w, "fixed-procs", c.FixedProcs)
	}
	if c.Log {
		keyBool(w, "log", c.Log)
	}
	keyString(w, "log-prefix", c.LogPrefix)
	if c.AggregateInterval != nil {
		keyInt(w, "aggregate-interval", int64(*c.AggregateInterval))
	}
	if c.SamplingRate != nil {
		keyFloat(w, "sampling-rate", *c.SamplingRate)
	}
	if c.ProgressTimestamp {
		keyBool(w, "progress-timestamp", c.ProgressTimestamp)
	}
	if c.FailuresDetailed {
		keyBool(w, "failures-detailed", c.FailuresDetailed)
	}
	if c.VerboseErrors {
		keyBool(w, "verbose-errors", c.VerboseErrors)
	}
	if c.NoVacuum {
		keyBool(w, "no-vacuum", c.NoVacuum)
	}
	if c.VacuumAll {
		keyBool(w, "vacuum-all", c.VacuumAll)
	}
	if c.Initialize {
		keyBool(w, "initialize", c.Initialize)
	}
	if c.ExitOnAbort {
		keyBool(w, "exit-on-abort", c.ExitOnAbort)
	}
}

func keyString(w *metrics.JSONWriter, key, v string) {
	w.Key(key)
	w.String(v)
}

func keyStrings(w *metrics.JSONWriter, key string, v []string) {
	w.Key(key)
	w.Strings(v)
}

func keyStringMap(w *metrics.JSONWriter, key string, m map[string]string) {
	w.Key(key)
	w.StringMap(m)
}

func keyInt(w *metrics.JSONWriter, key string, v int64) {
	w.Key(key)
	w.Int(v)
}

func keyUint(w *metrics.JSONWriter, key string, v uint64) {
	w.Key(key)
	w.Uint(v)
}

func keyBool(w *metrics.JSONWriter, key string, v bool) {
	w.Key(key)
	w.Bool(v)
}

func keyFloat(w *metrics.JSONWriter, key string, v float64) {
	w.Key(key)
	w.Float(v)
}
