// Package store keeps benchmark runs on disk: one directory per run under a
// results directory, written append-only and crash-safe, and read back for
// listing, reports and comparisons. It never talks to a database.
//
// # Layout
//
//	<results>/                      Open; $PGARENA_RESULTS or ./pgarena-results
//	  20261122-031512-tpcb/         one run; the id is the UTC creation time and
//	                                the workload, "-2", "-3"... on collision
//	    spec.json                   RunSpec: what was asked for, host, versions;
//	                                written first, before anything connects
//	    run.lock                    flock(LOCK_EX) held by the writing process
//	                                until Close: a reader that can take a shared
//	                                lock knows the writer is gone
//	    server.json                 ServerInfo: version and settings, once connected
//	    intervals.jsonl             one metrics.Interval per line (compact JSON with
//	                                base64 HDR histograms), appended at every
//	                                tick
//	    histograms.hlog             at the end: the full latency histogram of each
//	                                transaction type over the measured part of the
//	                                run, in HdrHistogram log format, tagged with
//	                                the type's name; values in microseconds (so
//	                                the Interval_Max column, scaled by the
//	                                library's fixed 1e6 ratio, is in seconds)
//	    summary.json                metrics.Summary, written last: its presence
//	                                means the run ended (complete, stopped, failed)
//	    samples.jsonl               one Sample per line: what a server or host
//	                                source saw at one instant, as named series;
//	                                appended as samples come
//	    findings.json               end-of-run findings ([]Finding), atomically
//	    server.log ...              other files named through Writer.Path
//
// # Crash safety
//
// Whole files (spec.json, server.json, histograms.hlog, summary.json) are
// written to a temporary file, fsynced, renamed into place and the directory
// fsynced, so a reader sees either nothing or the complete file.
// intervals.jsonl and samples.jsonl only grow: each AppendIntervals or
// AppendSamples is one write, and a file is fsynced once its oldest
// unsynced append is 10 s old, and at Finish and Close. A process killed
// mid-write leaves at most a torn final line, which Load ignores
// (Run.Truncated); a machine crash may lose the last 10 s of each file. A run without summary.json is reported
// as running while its lock is held and as interrupted otherwise; its summary
// is then computed from the intervals that reached the disk.
//
// # Full disk
//
// Open refuses a results directory with less than 64 kB free; Create that
// meets a full disk removes the run directory it made. Every write that
// finds no room (ENOSPC, EDQUOT) fails with one line naming the results
// directory and wrapping ErrDiskFull; an append is cut back to its last
// whole line, so a run whose disk filled reads as interrupted with every
// interval appended before.
package store
