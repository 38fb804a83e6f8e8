package runconfig

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
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
	b := c.appendJSON(make([]byte, 0, 1024))
	if len(b) == 0 {
		return []byte("{}"), nil
	}
	b[0] = '{' // the first key's comma
	return append(b, '}'), nil
}

// appendJSON appends c's members, each after a comma.
func (c *Config) appendJSON(b []byte) []byte {
	b = keyString(b, "workload", c.Workload)
	if len(c.Args) > 0 {
		b = keyStrings(b, "args", c.Args)
	}
	if len(c.Params) > 0 {
		b = keyStringMap(b, "params", c.Params)
	}
	if c.DSN != "" {
		b = keyString(b, "dsn", c.DSN)
	}
	if c.Cluster != "" {
		b = keyString(b, "cluster", c.Cluster)
	}
	if c.WaitReady != 0 {
		b = keyInt(b, "wait-ready", int64(c.WaitReady))
	}
	if c.PgBin != "" {
		b = keyString(b, "pg-bin", c.PgBin)
	}
	if len(c.PgSet) > 0 {
		b = keyStrings(b, "pg-set", c.PgSet)
	}
	if c.KeepCluster {
		b = keyBool(b, "keep-cluster", c.KeepCluster)
	}
	if c.Via != "" {
		b = keyString(b, "via", c.Via)
	}
	if c.PoolSize != nil {
		b = keyInt(b, "pool-size", int64(*c.PoolSize))
	}
	b = keyInt(b, "pooler-ready-timeout", int64(c.PoolerReadyTimeout))
	if c.PoolerAdminDSN != "" {
		b = keyString(b, "pooler-admin-dsn", c.PoolerAdminDSN)
	}
	if c.Segment != "" {
		b = keyString(b, "segment", c.Segment)
	}
	if c.StartAt != "" {
		b = keyString(b, "start-at", c.StartAt)
	}
	if c.SegmentOf != "" {
		b = keyString(b, "segment-of", c.SegmentOf)
	}
	if c.Agents != nil {
		b = keyInt(b, "agents", int64(*c.Agents))
	}
	if c.SegmentIDFile != "" {
		b = keyString(b, "segment-id-file", c.SegmentIDFile)
	}
	b = keyString(b, "clients", c.Clients)
	if c.Rate != "" {
		b = keyString(b, "rate", c.Rate)
	}
	if c.Schedule != "" {
		b = keyString(b, "schedule", c.Schedule)
	}
	b = keyString(b, "arrival", c.Arrival)
	if c.LatencyLimit != 0 {
		b = keyInt(b, "latency-limit", int64(c.LatencyLimit))
	}
	if c.Ramp != 0 {
		b = keyInt(b, "ramp", int64(c.Ramp))
	}
	if c.Warmup != 0 {
		b = keyInt(b, "warmup", int64(c.Warmup))
	}
	if len(c.Autostop) > 0 {
		b = keyStrings(b, "autostop", c.Autostop)
	}
	if c.Replica != "" {
		b = keyString(b, "replica", c.Replica)
	}
	if c.ReplicaDSN != "" {
		b = keyString(b, "replica-dsn", c.ReplicaDSN)
	}
	if c.ReadDSN != "" {
		b = keyString(b, "read-dsn", c.ReadDSN)
	}
	b = keyInt(b, "replica-sync-timeout", int64(c.ReplicaSyncTimeout))
	if c.Failover != 0 {
		b = keyInt(b, "failover", int64(c.Failover))
	}
	if c.FailoverCommand != "" {
		b = keyString(b, "failover-command", c.FailoverCommand)
	}
	if c.FailoverExternal {
		b = keyBool(b, "failover-external", c.FailoverExternal)
	}
	b = keyInt(b, "failover-timeout", int64(c.FailoverTimeout))
	b = keyInt(b, "catch-up-timeout", int64(c.CatchUpTimeout))
	if c.Jobs != 0 {
		b = keyInt(b, "jobs", int64(c.Jobs))
	}
	if c.Time != nil {
		b = keyInt(b, "time", int64(*c.Time))
	}
	if c.Transactions != 0 {
		b = keyInt(b, "transactions", int64(c.Transactions))
	}
	b = keyInt(b, "progress", int64(c.Progress))
	b = keyInt(b, "drain-timeout", int64(c.DrainTimeout))
	if c.Protocol != "" {
		b = keyString(b, "protocol", c.Protocol)
	}
	if c.Connect {
		b = keyBool(b, "connect", c.Connect)
	}
	b = keyInt(b, "max-tries", int64(c.MaxTries))
	if c.Label != "" {
		b = keyString(b, "label", c.Label)
	}
	if len(c.SessionSet) > 0 {
		b = keyStrings(b, "session-set", c.SessionSet)
	}
	if len(c.WorkerDSN) > 0 {
		b = keyStrings(b, "worker-dsn", c.WorkerDSN)
	}
	b = keyUint(b, "seed", c.Seed)
	if c.JSON {
		b = keyBool(b, "json", c.JSON)
	}
	if len(c.Out) > 0 {
		b = keyStrings(b, "out", c.Out)
	}
	if c.ReportPerCommand {
		b = keyBool(b, "report-per-command", c.ReportPerCommand)
	}
	if c.Results != "" {
		b = keyString(b, "results", c.Results)
	}
	b = keyInt(b, "interval", int64(c.Interval))
	if c.Init {
		b = keyBool(b, "init", c.Init)
	}
	b = keyInt(b, "load-workers", int64(c.LoadWorkers))
	if c.Check {
		b = keyBool(b, "check", c.Check)
	}
	b = keyInt(b, "sample-interval", int64(c.SampleInterval))
	if c.ServerLog != "" {
		b = keyString(b, "server-log", c.ServerLog)
	}
	if c.DBHostLocal {
		b = keyBool(b, "db-host-local", c.DBHostLocal)
	}
	b = keyFloat(b, "max-error-rate", c.MaxErrorRate)
	if c.ProceedWithConnected {
		b = keyBool(b, "proceed-with-connected", c.ProceedWithConnected)
	}
	if c.CPUProfile != "" {
		b = keyString(b, "cpu-profile", c.CPUProfile)
	}
	b = keyString(b, "net-io", c.NetIO)
	if c.FixedProcs {
		b = keyBool(b, "fixed-procs", c.FixedProcs)
	}
	if c.Log {
		b = keyBool(b, "log", c.Log)
	}
	b = keyString(b, "log-prefix", c.LogPrefix)
	if c.AggregateInterval != nil {
		b = keyInt(b, "aggregate-interval", int64(*c.AggregateInterval))
	}
	if c.SamplingRate != nil {
		b = keyFloat(b, "sampling-rate", *c.SamplingRate)
	}
	if c.ProgressTimestamp {
		b = keyBool(b, "progress-timestamp", c.ProgressTimestamp)
	}
	if c.FailuresDetailed {
		b = keyBool(b, "failures-detailed", c.FailuresDetailed)
	}
	if c.VerboseErrors {
		b = keyBool(b, "verbose-errors", c.VerboseErrors)
	}
	if c.NoVacuum {
		b = keyBool(b, "no-vacuum", c.NoVacuum)
	}
	if c.VacuumAll {
		b = keyBool(b, "vacuum-all", c.VacuumAll)
	}
	if c.Initialize {
		b = keyBool(b, "initialize", c.Initialize)
	}
	if c.ExitOnAbort {
		b = keyBool(b, "exit-on-abort", c.ExitOnAbort)
	}
	return b
}

func appendKey(b []byte, key string) []byte {
	b = append(b, ',')
	b = appendJSONString(b, key)
	return append(b, ':')
}

func keyString(b []byte, key, v string) []byte {
	return appendJSONString(appendKey(b, key), v)
}

func keyStrings(b []byte, key string, v []string) []byte {
	b = appendKey(b, key)
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// keyStringMap writes m's keys in order, as encoding/json does.
func keyStringMap(b []byte, key string, m map[string]string) []byte {
	b = appendKey(b, key)
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

func keyInt(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(appendKey(b, key), v, 10)
}

func keyUint(b []byte, key string, v uint64) []byte {
	return strconv.AppendUint(appendKey(b, key), v, 10)
}

func keyBool(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(appendKey(b, key), v)
}

// keyFloat writes a finite v as encoding/json does (its floatEncoder).
func keyFloat(b []byte, key string, v float64) []byte {
	b = appendKey(b, key)
	format := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 -> e-7
		b = b[:n-1]
	}
	return b
}

// appendJSONString writes s quoted; what is not plain printable ASCII
// goes through encoding/json (escapes, HTML-safe characters, invalid
// UTF-8).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
