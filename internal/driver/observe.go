package driver

import (
	"time"

	"github.com/pgarena/pgarena/internal/pgerr"
)

// TxEvent is the outcome of one transaction, as a TxObserver sees it.
type TxEvent struct {
	// Client is the client's id (they run on across groups).
	Client int
	// Type is the transaction type's index in the Recorder (the group's
	// TxBase plus the index in its Workload.TxTypes()).
	Type int
	// Intended is the scheduled start (open loop) or the start; Start is
	// when the client began it; End when it committed, failed or was
	// skipped.
	Intended, Start, End time.Time
	// Class is pgerr.ClassNone for a commit, else the failure's class.
	Class pgerr.ErrorClass
	// Err is the failure's error (nil for a commit or a skip).
	Err error
	// Skipped: an open-loop transaction already later than the latency
	// limit when a client took it (pgbench -L); not run.
	Skipped bool
	// Retries is how many times it was tried again after a serialization
	// failure or deadlock (--max-tries).
	Retries int
}

// TxObserver sees every transaction that the Recorder counts (committed,
// failed or skipped; not those cancelled by the run's own stop), from the
// client's goroutine, right after the Recorder. Clients call it
// concurrently. It must be quick and must not block: it runs in the measured
// loop, between one transaction and the next. Config.Observer nil (the
// default) costs a nil check per transaction.
type TxObserver interface {
	ObserveTx(e TxEvent)
}
