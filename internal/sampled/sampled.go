// Package sampled names the sampled series: internal/sampler (and session,
// for replicas' heartbeat lag) writes them into a run's samples, report
// draws and judges them, autostop rules watch them. Each name is declared
// here once; a name is SOURCE.what_unit, SOURCE being the prefix of the
// source that samples it (pg., host., pooler., citus.<worker>., log.).
// Families end in "." and are completed by a word (a wait event, a
// standby, a disk); a name's meaning is documented where it is sampled.
package sampled

// The sources' prefixes.
const (
	Server = "pg."     // the server's statistics views (sampler/server.go)
	Host   = "host."   // /proc of pgarena's host (sampler/host.go)
	Pooler = "pooler." // a pooler's console (sampler/pooler.go)
	Citus  = "citus."  // Citus workers: Citus + worker word + "." + a Citus leaf below
	Log    = "log."    // the server log (sampler/serverlog.go)
)

// The server: pg_stat_database, pg_stat_activity, WAL, locks, replication.
const (
	XactCommitPerS   = "pg.xact_commit_per_s"
	XactRollbackPerS = "pg.xact_rollback_per_s"
	TPM              = "pg.tpm"
	CacheHitPct      = "pg.cache_hit_pct"

	ConnectionsTotal         = "pg.connections.total"
	ConnectionsMax           = "pg.connections.max"
	ConnectionsCitusInternal = "pg.connections.citus_internal"
	Connections              = "pg.connections." // + state word
	Active                   = "pg.active"
	Wait                     = "pg.wait." // + "type:event" or CPU: active sessions waiting on it
	WaitOther                = "pg.wait.other"
	WaitType                 = "pg.wait_type." // + wait event type
	WaitTypeLock             = WaitType + "Lock"

	WALBytesPerS   = "pg.wal_bytes_per_s"
	WALFPIPerS     = "pg.wal_fpi_per_s"
	WALBuffersFull = "pg.wal_buffers_full"
	LocksWaiting   = "pg.locks.waiting"
	LocksTotal     = "pg.locks.total"

	Replication         = "pg.replication." // + standby word + LagBytes (pg_stat_replication)
	ReplicationStandbys = "pg.replication.standbys"
	LagBytes            = ".lag_bytes"
	Replica             = "pg.replica." // + replica name + LagS: pgarena's heartbeat lag
	LagS                = ".lag_s"

	Stmt          = "pg.stmt." // + queryid (pg_stat_statements)
	StmtTotalTime = "pg.stmt.total.time_ms_per_s"
	StmtOtherTime = "pg.stmt.other.time_ms_per_s"
)

// ReplicaLag is the heartbeat lag series of the replica named name.
func ReplicaLag(name string) string { return Replica + name + LagS }

// The host.
const (
	CPUUserPct    = "host.cpu.user_pct"
	CPUSysPct     = "host.cpu.sys_pct"
	CPUIOWaitPct  = "host.cpu.iowait_pct"
	CPUStealPct   = "host.cpu.steal_pct"
	CPUIdlePct    = "host.cpu.idle_pct"
	CPUBusyPct    = "host.cpu.busy_pct"
	PgarenaCores  = "host.pgarena.cores"
	PgarenaCPUPct = "host.pgarena.cpu_pct"

	MemTotalBytes     = "host.mem.total_bytes"
	MemAvailableBytes = "host.mem.available_bytes"
	MemUsedBytes      = "host.mem.used_bytes"
	MemUsedPct        = "host.mem.used_pct"

	Disk        = "host.disk." // + device word + "." + DiskUtilPct and other leaves
	DiskUtilPct = "util_pct"
)

// The pooler.
const (
	PoolerClActive     = "pooler.cl_active"
	PoolerClWaiting    = "pooler.cl_waiting"
	PoolerSvActive     = "pooler.sv_active"
	PoolerSvIdle       = "pooler.sv_idle"
	PoolerSvUsed       = "pooler.sv_used"
	PoolerSvLogin      = "pooler.sv_login"
	PoolerMaxwaitS     = "pooler.maxwait_s"
	PoolerXactPerS     = "pooler.xact_per_s"
	PoolerQueryPerS    = "pooler.query_per_s"
	PoolerSessionsPerS = "pooler.sessions_per_s"
	PoolerSelectPerS   = "pooler.select_per_s"
	PoolerWaitSPerS    = "pooler.wait_s_per_s"
	PoolerXactTimeMS   = "pooler.xact_time_ms"
	PoolerQueryTimeMS  = "pooler.query_time_ms"
	PoolerRetries      = "pooler.retries"
	PoolerErrors       = "pooler.errors"
	PoolerScur         = "pooler.scur" // haproxy: sessions of the frontend
	PoolerQcur         = "pooler.qcur" // haproxy: queued for a backend
	PoolerProcesses    = "pooler.processes"
	PoolerProcessesBy  = "pooler.processes." // + status word (pgpool)
	PoolerNodesUp      = "pooler.nodes_up"
)

// A Citus worker's series: Citus + worker word + "." + one of these.
const (
	CitusConnectionsClient   = "connections.client"
	CitusConnectionsInternal = "connections.citus_internal"
	CitusXactCommitPerS      = "xact_commit_per_s"
	CitusRowsReadPerS        = "rows_read_per_s"
	CitusWALBytesPerS        = "wal_bytes_per_s"
	CitusWait                = "wait." // + "type:event" or CPU
	CitusCPUCores            = "cpu_cores"
	CitusCPUPct              = "cpu_pct"
)

// CitusWorker is the prefix of the series of the Citus worker whose word
// (in series names) is word.
func CitusWorker(word string) string { return Citus + word + "." }
