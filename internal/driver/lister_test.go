package driver

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/workload"
)

// listWorkload's workers run a list of n transactions (workload.Lister),
// then end with workload.ErrStopped.
type listWorkload struct {
	sleepWorkload
	n int
}

func (l *listWorkload) NewWorker(id int, rng *rand.Rand) workload.Worker {
	return &listWorker{sleepWorker: l.sleepWorkload.NewWorker(id, rng).(*sleepWorker), n: l.n}
}

type listWorker struct {
	*sleepWorker
	n, ran int
}

func (w *listWorker) Len() int { return w.n }
func (w *listWorker) Do(ctx context.Context, conn *pgx.Conn, tx workload.TxType) error {
	if w.ran++; w.ran > w.n {
		return workload.ErrStopped
	}
	return w.sleepWorker.Do(ctx, conn, tx)
}

// TestListerCutShort: a run whose clients have lists is complete when
// every list ran (failures count as ran), and cut short (Stopped, with the
// reason) when -t or -T ended it first.
func TestListerCutShort(t *testing.T) {
	t.Parallel()
	failSecond := func(_, n int) error {
		if n == 2 {
			return errors.New("boom")
		}
		return nil
	}
	for _, c := range []struct {
		name    string
		fail    func(client, n int) error
		cfg     Config
		stopped string
	}{
		{"ran", nil, Config{Duration: time.Minute}, ""},
		{"a failure counts", failSecond, Config{Duration: time.Minute}, ""},
		{"-t", nil, Config{Transactions: 2}, "2 of 2 clients had not finished their transaction lists when -t 2 transactions per client were done"},
		{"-T", nil, Config{Duration: 100 * time.Millisecond}, "2 of 2 clients had not finished their transaction lists when the run's length (-T 100ms) ended"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := &listWorkload{sleepWorkload: sleepWorkload{sleep: 10 * time.Millisecond, fail: c.fail}, n: 3}
			if c.name == "-T" {
				w.sleep, w.n = 40*time.Millisecond, 100
			}
			cfg := c.cfg
			cfg.Clients, cfg.Tick = 2, 50*time.Millisecond
			res, err := Run(context.Background(), w, nilDialer, cfg, metrics.NewRecorder(w.TxTypes(), time.Now()))
			if err != nil {
				t.Fatal(err)
			}
			if res.Stopped != (c.stopped != "") || !strings.Contains(res.StopReason, c.stopped) {
				t.Errorf("stopped %v (%q), want stopped %v (%q)", res.Stopped, res.StopReason, c.stopped != "", c.stopped)
			}
		})
	}
}
