package metrics

// Failover is what a failover during the run cost (--failover): the
// primary stopped FaultAtS into the measured time, a standby was promoted, and
// the clients followed through a multi-host connection string
// (target_session_attrs=read-write).
//
// The loss is counted exactly by a ledger: a dedicated client inserts
// increasing ids into pgarena's ledger table, one per transaction, and
// remembers those whose commit it saw acknowledged; after the run the new
// primary is asked for them.
type Failover struct {
	// Fault is how the primary was stopped: "immediate shutdown"
	// (pg_ctl stop -m immediate) or "command" (--failover-command).
	Fault string `json:"fault"`
	// Promotion is "pg_promote" (pgarena promoted the standby) or
	// "external" (pgarena waited for the user's orchestrator).
	Promotion string `json:"promotion"`
	// Replication is the standby's sync_state on the primary in the
	// second before the fault (pg_stat_replication): async, sync, quorum
	// or potential; empty when the primary did not list it.
	Replication string `json:"replication"`
	// Problem says why the figures are missing or partial (the run ended
	// before the fault, the promotion timed out...); empty when measured.
	Problem string `json:"problem,omitempty"`

	// FaultAtS is when the fault came, in measured time: from the end of
	// the warm-up (--failover's AFTER, later only by the time the fault
	// takes to begin: the heartbeat's stop); 0 when it did not come
	// (Problem says why).
	FaultAtS float64 `json:"fault_at_s"`
	// PromotedS is the time from the fault until pgarena saw the standby
	// out of recovery (pg_promote returned; with an orchestrator, polled
	// every 100 ms): the promotion itself may end a little earlier.
	PromotedS float64 `json:"promoted_s"`
	// DowntimeS is the time from the fault to the first commit on the new
	// primary (the ledger client's, which retries every 20 ms).
	DowntimeS float64 `json:"downtime_s"`
	// FailedDuring counts the workload's transactions that failed in the
	// intervals that overlap the downtime (interval-granular), by class.
	FailedDuring int64       `json:"failed_during"`
	ErrorsDuring ErrorCounts `json:"errors_during"`
	// RecoveredS is the time from the fault to the end of the first
	// interval after the downtime whose rate is at least 90% of the median
	// rate of the measured intervals before the fault; 0 when the rate
	// never came back.
	RecoveredS float64 `json:"recovered_s"`

	// LedgerAcked counts the ledger's acknowledged commits;
	// AckedLost those the new primary does not hold (0 is the only
	// right answer with a synchronous standby).
	LedgerAcked int64 `json:"ledger_acked"`
	AckedLost   int64 `json:"acked_lost"`
	// InDoubt counts the ledger transactions whose commit got no answer
	// (the connection broke): unfinished, neither acknowledged nor
	// failed by the server; InDoubtKept of them are on the new primary.
	InDoubt     int64 `json:"in_doubt"`
	InDoubtKept int64 `json:"in_doubt_kept"`
}

// A failover's events are recorded as they happen, as samples of source
// FailoverSource (one value each, named below, 1 at the moment it
// happened; FailoverArmed's, recorded when measuring starts, is when the
// fault is due, s after it): a live page shows them before the summary
// exists.
const (
	FailoverSource      = "failover"
	FailoverArmed       = "failover.armed"
	FailoverFault       = "failover.fault"
	FailoverPromoted    = "failover.promoted"
	FailoverFirstCommit = "failover.first_commit"
)
