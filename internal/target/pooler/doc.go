// Package pooler puts a connection pooler or proxy between the clients and
// a target: pgbouncer, haproxy or pgpool-II from the distribution's
// packages, started on a unix socket in a private temporary directory with
// a generated configuration pointing at the server the inner provider
// (embedded cluster, named cluster, DSN) reaches, and stopped and removed
// at teardown. The target it returns dials through the pooler; Server keeps
// the server itself (samplers, loader), Pooler describes the pooler for the
// run record and Admin (or Pooler.StatsSocket) is where its statistics are
// read.
//
// External wraps a DSN that already goes through a pooler the user runs
// (pgbouncer, odyssey): its admin console is sampled.
//
// Each kind is one file behind the small kind interface (pgbouncer.go,
// haproxy.go, pgpool.go). A kind that is not installed is bad input naming
// the package to install.
package pooler
