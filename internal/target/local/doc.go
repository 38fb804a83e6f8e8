// Package local runs an embedded PostgreSQL cluster from the server binaries
// installed on this machine: the target pgarena benchmarks when no --dsn is
// given, and the cluster internal/pgtest gives to tests.
//
// Nothing here reads the process environment: callers pass an Env (the
// CLI's Main.Env) for PATH, TMPDIR, PGARENA_HOME, XDG_DATA_HOME and HOME.
//
// FindBinaries locates an installation ($PGARENA_PG_BIN when --pg-bin is not
// given, else PATH, pg_config --bindir, the usual distribution directories;
// the highest major version wins). Start runs initdb (superuser "pgarena",
// trust authentication, UTF8, C locale), writes the server settings into
// pgarena.conf in the data directory (included from
// postgresql.conf and rewritten at every start, so ALTER SYSTEM still wins),
// starts the server with pg_ctl and waits until it accepts connections. The
// server listens on 127.0.0.1 and on a unix socket in its data directory.
// Trust authentication means any local user may connect as the superuser:
// these clusters are for benchmarks and tests, not for data that matters.
//
// Settings are Defaults for this machine (shared_buffers at 25% of memory,
// larger WAL, checkpoint logging) overlaid with the user's --pg-set values.
// fsync and synchronous_commit keep PostgreSQL's defaults so that numbers are
// honest.
//
// PostgreSQL refuses to run as root. When pgarena runs as root, initdb,
// pg_ctl and the server run as the "postgres" system user (or as a "pgarena"
// system user created for the purpose), through exec.Cmd credentials; the
// data directory is owned by that user with mode 0700, and the directories
// above it must be searchable by it.
//
// A cluster is either temporary (a fresh directory under $TMPDIR, removed
// by Remove), a directory the caller names (Options.DataDir), or a named
// cluster that persists under ClustersDir(env) and is managed by
// `pgarena cluster start|stop|status|env|rm --name NAME`. Every directory
// pgarena creates carries a pgarena-cluster.json marker; Remove never deletes
// a directory without one. RemoveStale cleans up temporary clusters whose
// pgarena process died without removing them.
//
// Every wait (initdb, pg_ctl, connection checks, shutdown) has a deadline.
package local
