package driver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgarena/pgarena/internal/pgerr"
)

// events collects what an observer sees.
type events struct {
	mu sync.Mutex
	ev []TxEvent
}

func (e *events) ObserveTx(x TxEvent) { e.mu.Lock(); e.ev = append(e.ev, x); e.mu.Unlock() }

// TestObserverSeesWhatIsCounted: the observer sees every committed and
// failed transaction the Recorder counts, with its client, timing, class,
// error and retries.
func TestObserverSeesWhatIsCounted(t *testing.T) {
	ser := &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
	// Client 1 fails two attempts in three with a serialization failure:
	// with 2 tries some transactions commit on their retry, others fail
	// after it. Client 0 always commits.
	w := &sleepWorkload{sleep: time.Millisecond, fail: func(client, n int) error {
		if client == 1 && n%3 != 0 {
			return ser
		}
		return nil
	}}
	obs := &events{}
	_, col, err := run(t, context.Background(), w, nilDialer, Config{Clients: 2, Transactions: 6, MaxTries: 2,
		Tick: 50 * time.Millisecond, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	ok, failed, retries, _ := col.total()
	var seenOK, seenFailed, seenRetries int64
	for _, e := range obs.ev {
		if e.Client < 0 || e.Client > 1 || e.Type != 0 || e.End.Before(e.Start) || e.Start.Before(e.Intended) {
			t.Fatalf("event %+v", e)
		}
		seenRetries += int64(e.Retries)
		switch {
		case e.Class == pgerr.ClassNone && e.Err == nil:
			seenOK++
		case e.Class == pgerr.ClassSerialization && e.Err == ser && e.Client == 1:
			seenFailed++
		default:
			t.Fatalf("event %+v", e)
		}
	}
	if seenOK != ok || seenFailed != failed || seenRetries != retries || failed == 0 || retries == 0 {
		t.Errorf("observer saw %d committed, %d failed, %d retries; the recorder counted %d, %d, %d",
			seenOK, seenFailed, seenRetries, ok, failed, retries)
	}
}
