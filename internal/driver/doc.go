// Package driver runs a workload against a database under a load model and
// feeds every transaction's timing to a metrics.Recorder. It owns every
// clock of a run: when clients connect, when a transaction is due, when the
// run ends, when intervals are cut. It reads the time and waits only through
// Config.Clock (package clock), so a test can run it on a clock.Fake and
// assert exact timings.
//
// The closed loop (the default, pgbench's model) keeps each client busy: a
// client starts its next transaction as soon as the previous one ends, so
// the intended start equals the actual start. A worker that emulates a user
// (workload.Pacer, TPC-C keying and think times) makes its client sleep the
// keying time before each transaction and the think time after it; the
// transaction's latency still counts from its actual start, and a stop ends
// either sleep at once. An open loop ignores these pauses.
//
// A client whose connection is lost reconnects with exponential backoff
// while the run goes on; every transaction that could not run because its
// client had no connection is counted as failed in the class of the
// connection error, so an outage shows in the intervals instead of vanishing
// from them.
//
// The driver never imports the store or the report: intervals leave through
// Config.OnInterval.
package driver
