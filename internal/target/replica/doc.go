// Package replica provides replicas of a target and measures how far they
// lag behind it.
//
// Provider wraps the provider of a local primary (the embedded cluster or a
// named cluster) and starts a replica of it on this host: a streaming
// standby (pg_basebackup -R, started by internal/target/local), a built-in
// logical subscriber (publication and subscription of the workload's
// tables), a pglogical subscriber (Debian's postgresql-NN-pglogical), or
// a slony subscriber (slony.go: slonik and two slon daemons pgarena runs)
// or a londiste leaf (londiste.go: pgqd and two londiste workers).
// The logical kinds, slony and londiste follow the workload's tables only once they are loaded
// (target.Replica.Attach): the subscriber gets the tables' definitions from
// pg_dump --schema-only, then copies their data (copy_data), and Attach
// returns when the copy is done, so the measured run starts in sync.
// Pair (pair.go) sets slony or londiste up between the primary and an
// existing server the user names (--replica slony --replica-dsn STANDBY):
// on the standby only the replicated tables and the system's own objects
// (marked), dropped again at teardown; a standby that has any of them
// already is refused before the run (target.Replica.Check).
// DSN adds a replica the user runs (any replication system: streaming,
// logical, pglogical, slony, londiste...) to any provider; it must
// replicate pgarena's heartbeat table like the workload's tables (slony and
// londiste: add pgarena_heartbeat to the set).
//
// Lag is measured the same way for every system: pgarena creates a
// heartbeat table (marked, like the loader's tables) on the primary and
// bumps its one row every 100 ms (Heartbeat); a replica's lag is the age,
// on pgarena's own clock, of the oldest beat it has not shown yet (Monitor),
// so no clock of a server is compared with another. While a replica cannot
// be read (down, unreachable), its lag keeps growing from the newest beat it
// was seen to hold, and the failed reads are counted. CatchUp waits after
// the load until every replica shows a beat written after it.
//
// DSN checks a replica before the run: it answers and is another server
// than the primary (system identifier, or a standby of it); the run then
// requires a new beat within ShowWait from a replica that replicates
// nothing by its own account (Progress).
//
// Failover (failover.go) stops the primary during a run, promotes a
// streaming standby, and counts the acknowledged commits the new primary
// lacks with a ledger client.
package replica
