// Package sampler watches the server and the host while a run goes on and
// puts what it sees on the run's timeline, so that a report can explain a
// result: commits per second beside throughput, connections that drop,
// sessions waiting on locks, a disk at 100% util, a checkpoint storm.
//
// # Use
//
//	s, err := sampler.Start(ctx, sampler.Options{
//		ConnConfig:    cfg,                 // the server; nil watches the host only
//		Interval:      time.Second,         // default 1 s
//		DBHostLocal:   embedded,            // the server runs on this host too
//		DataDir:       cluster.DataDir(),   // optional: names the device holding it
//		ServerLogPath: cluster.LogPath(),   // optional: count ERROR/FATAL/PANIC lines
//		Sink:          func(b []store.Sample) { _ = run.AppendSamples(b...) },
//	})
//	...                                     // the driver runs
//	findings := s.Stop()                    // returns within a few seconds, always
//	_ = run.SetFindings(findings)
//
// Start connects (application_name=pgarena-sampler), looks at what the
// server offers and takes a first sample at once; then one batch of samples
// every Interval goes to Sink, called from the sampler's own goroutine (it
// should be quick: appending to the run is fine). The sampler stops when
// Stop is called or ctx ends; Stop is safe to call more than once and
// returns the end-of-run findings, most severe first.
//
// # Sources and series
//
// Each batch holds one store.Sample per source. Series names are unique
// across sources; "_per_s" series are rates over the interval, "_pct"
// percentages, series without a unit suffix are counts in the interval
// (deadlocks, checkpoints) or gauges (connections, lag).
//
//	pg_stat_database  pg.xact_commit_per_s pg.xact_rollback_per_s pg.tpm
//	                  pg.deadlocks pg.conflicts pg.temp_files pg.temp_bytes_per_s
//	                  pg.blks_hit_per_s pg.blks_read_per_s pg.cache_hit_pct
//	                  pg.tup_{returned,fetched,inserted,updated,deleted}_per_s
//	activity          pg.connections.total (client backends, the sampler excluded)
//	                  pg.connections.max, pg.connections.<state> (active, idle,
//	                  idle_in_transaction...), pg.active (active sessions),
//	                  pg.wait.<type>:<event> for the top N waits of active
//	                  sessions ("CPU" when not waiting) and pg.wait.other,
//	                  pg.wait_type.<type> for every type
//	                  pg.connections.citus_internal (Citus's connections between
//	                  nodes, application_name citus_internal..., not in total)
//	citus_workers     per Citus worker (Options.CitusWorkers, label worker;
//	                  <worker> is host_port, e.g. 127_0_0_1_9701):
//	                  citus.<worker>.{xact_commit_per_s,xact_rollback_per_s,
//	                  rows_read_per_s,wal_bytes_per_s,active,waiting,
//	                  connections.client,connections.citus_internal},
//	                  citus.<worker>.wait.<type>:<event>, .wait.other and
//	                  .wait_type.<type> as pg.wait* (Citus's internal sessions
//	                  included: they do the work there); for a worker on this
//	                  host (loopback, Unix socket, host name or an interface's
//	                  address, and its backend found in /proc by pid and start
//	                  time) citus.<worker>.cpu_cores and .cpu_pct (of the
//	                  machine): its postmaster's and children's CPU, reaped
//	                  ones included; for another host a note says it is not
//	                  sampled; a finding when one worker
//	                  did over 1.25 times the mean of the workers' commits or rows
//	wal               pg.wal_bytes_per_s, pg.wal_fpi_per_s and pg.wal_buffers_full
//	                  (PostgreSQL 14+); skipped on a standby
//	checkpoints       pg.checkpoints_timed pg.checkpoints_req pg.checkpoint_write_ms
//	                  pg.checkpoint_sync_ms pg.buffers_checkpoint_per_s
//	                  pg.buffers_clean_per_s pg.maxwritten_clean
//	                  pg.buffers_backend_per_s (pg_stat_bgwriter; from 17 on
//	                  pg_stat_checkpointer, and pg_stat_io's relation writes
//	                  by backends for buffers_backend)
//	locks             pg.locks.waiting pg.locks.total
//	replication       pg.replication.standbys and per standby
//	                  pg.replication.<name>.{lag_bytes,write_lag_s,flush_lag_s,replay_lag_s}
//	pg_stat_statements pg.stmt.<queryid>.{time_ms_per_s,calls_per_s,mean_ms} for the
//	                  top N by execution time in the interval, pg.stmt.other.time_ms_per_s,
//	                  pg.stmt.total.time_ms_per_s; labels give each statement's text
//	host_cpu          host.cpu.{user,sys,iowait,steal,idle,busy}_pct host.load{1,5,15}
//	                  host.pgarena.cpu_pct (of the whole machine) host.pgarena.cores
//	host_mem          host.mem.{total,used,available}_bytes host.mem.used_pct
//	host_disk         host.disk.<dev>.{r_per_s,w_per_s,rkB_per_s,wkB_per_s,util_pct,
//	                  await_ms,r_await_ms,w_await_ms,aqu_sz}: iostat -x for whole
//	                  block devices (partitions, loop, ram and zram devices left out)
//	server_log        log.error log.fatal log.panic and log.<kind> (deadlock,
//	                  too_many_clients, terminating_connection, could_not_write,
//	                  serialization, statement_timeout, out_of_memory, constraint,
//	                  other): lines appended to the log since Start
//
// Host samples describe the client host; with DBHostLocal they are labelled
// db_host=true (the server's host too), and with DataDir the devices holding
// the data directory and pg_wal are labelled data_dir_device and wal_device.
//
// PostgreSQL 15 and later backends publish their statistics at most once a
// second, so pg_stat_database rates taken more often than that are lumpy;
// the default interval of 1 s is the finest that reads smoothly.
//
// # Failure
//
// A source that is not available or not permitted (no pg_stat_statements, a
// role without pg_read_all_stats, a standby, no /proc) skips itself and says
// so once in a Sample's Note; that is not an error. The server sources'
// queries go in one round trip (a batch: one simple-protocol message); from
// the first that fails, the rest run one by one, so a failure is its
// source's alone. Every query runs under a deadline (Options.QueryTimeout
// per query, and statement_timeout on the connection), so a stuck server
// never holds up a tick or Stop; a lost connection is noted and reopened at
// the next tick. The host source keeps its /proc files open and rereads
// them from offset 0 at each tick.
package sampler
