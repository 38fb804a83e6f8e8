// Package metrics records transaction outcomes and turns them into
// per-interval HDR latency histograms and run summaries.
//
// Each client owns a Handle and records into it without locks: a Handle is
// double-buffered, and its single writer only performs two atomic
// increments around each record. Once per tick the Recorder swaps every
// Handle's buffer, waits for at most one in-flight record per client, and
// merges the raw samples into one Interval with a histogram per transaction
// type (microseconds, 3 significant digits).
//
// Latency is end minus intended start: it includes any time the transaction
// waited for a client or a schedule slot. Service time (end minus actual
// start) is kept separately. Failed transactions never count as done; they
// are counted by pgerr.ErrorClass. Retries (--max-tries) are counted apart.
package metrics
