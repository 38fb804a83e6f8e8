package replica

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/await"
	"github.com/pgarena/pgarena/internal/target"
)

// BeatEvery is how often the heartbeat is bumped and read.
const BeatEvery = 100 * time.Millisecond

// catchUpPoll is how often replicas are read while a catch-up is awaited.
const catchUpPoll = 20 * time.Millisecond

// readTimeout bounds one read of a replica (and one beat).
const readTimeout = 2 * time.Second

// A replica whose heartbeat reads have all failed, downReads of them in a
// row over downAfter or more (its server refusing connections, or down),
// is down: a catch-up wait does not wait for it.
const (
	downReads = 5
	downAfter = 2 * time.Second
)

// MonitorOptions configure a Monitor.
type MonitorOptions struct {
	// Every is how often OnSample is called (the run's sample interval);
	// 0: never.
	Every time.Duration
	// OnSample receives, per replica name, the highest lag in seconds read
	// since the last call. Called from the monitor's goroutine.
	OnSample func(at time.Time, lagS map[string]float64)
	// Notef receives notes (a replica unreachable, a beat failing).
	Notef func(format string, args ...any)
}

// Monitor bumps the heartbeat and reads every replica's, until Stop.
type Monitor struct {
	hb       *Heartbeat
	opts     MonitorOptions
	watched  []*watched
	catching atomic.Bool
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// watched is one replica and what was read from it.
type watched struct {
	name  string
	rep   target.Replica
	mu    sync.Mutex
	seen  int64     // last beat read
	first int64     // beat of the first successful read (-2: none yet)
	read  []lagRead // every read, failed ones included
	peak  float64   // highest lag since the last OnSample
	fresh bool      // a read came since the last OnSample
	// failing counts the failed reads since the last good one, the first
	// of them at failingSince; readErr is the last one's error.
	failing      int
	failingSince time.Time
	readErr      error
}

// down reports whether w's reads have failed long enough at now for it
// to be down (downReads, downAfter). w.mu is held.
func (w *watched) down(now time.Time) bool {
	return w.failing >= downReads && now.Sub(w.failingSince) >= downAfter
}

// lagRead is one read of a replica's heartbeat. A failed read (the
// replica down, unreachable, or not answering within readTimeout) still
// has a lag: the age of the oldest beat after the newest one the replica
// was seen to hold, so lag keeps growing while it cannot be read.
type lagRead struct {
	at     time.Time
	lag    float64 // seconds
	failed bool
}

// Names gives each replica its series name: its kind, numbered when two
// share one.
func Names(reps []target.Replica) []string {
	count := map[string]int{}
	for _, r := range reps {
		count[r.Kind]++
	}
	seen := map[string]int{}
	out := make([]string, len(reps))
	for i, r := range reps {
		out[i] = r.Kind
		if count[r.Kind] > 1 {
			seen[r.Kind]++
			out[i] = fmt.Sprintf("%s%d", r.Kind, seen[r.Kind])
		}
	}
	return out
}

// StartMonitor starts beating hb and reading the replicas' heartbeat.
func StartMonitor(ctx context.Context, hb *Heartbeat, reps []target.Replica, opts MonitorOptions) *Monitor {
	if opts.Notef == nil {
		opts.Notef = func(string, ...any) {}
	}
	mctx, cancel := context.WithCancel(ctx)
	m := &Monitor{hb: hb, opts: opts, cancel: cancel}
	for i, name := range Names(reps) {
		w := &watched{name: name, rep: reps[i], seen: -1, first: -2}
		m.watched = append(m.watched, w)
		m.wg.Add(1)
		go m.readLoop(mctx, w)
	}
	m.wg.Add(1)
	go m.beatLoop(mctx)
	return m
}

func (m *Monitor) beatLoop(ctx context.Context) {
	defer m.wg.Done()
	t := time.NewTicker(BeatEvery)
	defer t.Stop()
	var lastSample time.Time
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			bctx, cancel := context.WithTimeout(ctx, readTimeout)
			_, err := m.hb.Beat(bctx)
			cancel()
			if err != nil && ctx.Err() == nil && !failing {
				m.opts.Notef("replication heartbeat: %v", err)
			}
			failing = err != nil
			if m.opts.OnSample != nil && m.opts.Every > 0 && now.Sub(lastSample) >= m.opts.Every {
				lastSample = now
				m.opts.OnSample(now, m.peaks())
			}
		}
	}
}

// peaks returns and resets each replica's highest lag since the last call.
func (m *Monitor) peaks() map[string]float64 {
	out := map[string]float64{}
	for _, w := range m.watched {
		w.mu.Lock()
		if w.fresh {
			out[w.name] = w.peak
		}
		w.peak, w.fresh = 0, false
		w.mu.Unlock()
	}
	return out
}

func (m *Monitor) readLoop(ctx context.Context, w *watched) {
	defer m.wg.Done()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	lost := false
	var lostAt time.Time
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, readTimeout)
		var err error
		if conn == nil || conn.IsClosed() {
			conn, err = target.Connect(rctx, w.rep.Config, "pgarena-replica-monitor")
			if err != nil {
				conn = nil
			} else {
				conn.Exec(rctx, "set statement_timeout = 2000")
			}
		}
		var seen int64
		if err == nil {
			seen, err = Seen(rctx, conn)
		}
		cancel()
		now := time.Now()
		switch {
		case err != nil && ctx.Err() == nil:
			if !lost {
				m.opts.Notef("replica %s: cannot read the heartbeat: %v", w.name, err)
				lostAt = now
			}
			lost = true
			if conn != nil && !conn.IsClosed() {
				conn.Close(context.Background())
			}
			conn = nil
			w.mu.Lock()
			if w.failing == 0 {
				w.failingSince = now
			}
			w.failing++
			w.readErr = err
			lag := m.hb.Lag(w.seen, now).Seconds()
			w.read = append(w.read, lagRead{at: now, lag: lag, failed: true})
			w.peak, w.fresh = max(w.peak, lag), true
			w.mu.Unlock()
		case err == nil:
			if lost {
				m.opts.Notef("replica %s: read again after %s", w.name, now.Sub(lostAt).Round(100*time.Millisecond))
			}
			lost = false
			lag := m.hb.Lag(seen, now).Seconds()
			w.mu.Lock()
			w.seen = seen
			w.failing, w.readErr = 0, nil
			if w.first == -2 {
				w.first = seen
			}
			w.read = append(w.read, lagRead{at: now, lag: lag})
			w.peak, w.fresh = max(w.peak, lag), true
			w.mu.Unlock()
		}
		// Next read: a beat later, or at once when a catch-up is awaited
		// (checked every catchUpPoll).
		for next := now.Add(BeatEvery); ctx.Err() == nil && time.Now().Before(next) && !m.catching.Load(); {
			select {
			case <-ctx.Done():
			case <-time.After(catchUpPoll):
			}
		}
		if m.catching.Load() {
			select {
			case <-ctx.Done():
			case <-time.After(catchUpPoll):
			}
		}
	}
}

// CatchUp writes a beat and waits until every replica shows it, or until
// timeout: per replica, how long after the beat it did (or timeout), and
// whether it did. Call it once the load is done: the beat follows every
// transaction of the load, so a replica showing it holds them all. While
// it waits it reports progress through Notef with what the replicas'
// servers report (Replica.Trouble); a primary refusing a replica's output
// plugin just now ends the wait with that error. flag names the flag that
// sets timeout, for the messages.
func (m *Monitor) CatchUp(ctx context.Context, timeout time.Duration, flag string) ([]time.Duration, []bool, error) {
	m.catching.Store(true)
	defer m.catching.Store(false)
	bctx, cancel := context.WithTimeout(ctx, readTimeout)
	seq, err := m.hb.Beat(bctx)
	cancel()
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	wait := await.Wait{What: "the replicas to catch up", Timeout: timeout, Flag: flag, Notef: m.opts.Notef}.Start()
	took := make([]time.Duration, len(m.watched))
	done := make([]bool, len(m.watched))
	reported := false
	for left := len(m.watched); left > 0; {
		for i, w := range m.watched {
			if done[i] {
				continue
			}
			w.mu.Lock()
			var at time.Time
			if w.seen >= seq && len(w.read) > 0 && !w.read[len(w.read)-1].failed {
				at = w.read[len(w.read)-1].at
			}
			w.mu.Unlock()
			if !at.IsZero() {
				took[i], done[i] = max(at.Sub(start), 0), true
				left--
			}
		}
		if left == 0 {
			break
		}
		if m.restDown(done, wait.Elapsed()) {
			for i := range took {
				if !done[i] {
					took[i] = wait.Elapsed()
				}
			}
			break
		}
		if wait.NextReport() == 0 || wait.Expired() || ctx.Err() != nil {
			status, refused := m.status(ctx, done)
			if refused != nil {
				return nil, nil, refused
			}
			if wait.Expired() || ctx.Err() != nil {
				for i := range took {
					if !done[i] {
						took[i] = wait.Elapsed()
					}
				}
				if status != "" {
					m.opts.Notef("the replicas did not catch up within %s: %s", timeout, status)
				}
				break
			}
			wait.Report(status)
			reported = true
		}
		time.Sleep(catchUpPoll / 4)
	}
	if reported && !slices.Contains(done, false) {
		m.opts.Notef("the replicas caught up in %s", slices.Max(took).Round(10*time.Millisecond))
	}
	return took, done, nil
}

// restDown reports whether every replica not done is down (their reads
// keep failing): the catch-up wait then ends, after elapsed, with a note
// of each one's error (ReadError), and took is elapsed for them.
func (m *Monitor) restDown(done []bool, elapsed time.Duration) bool {
	now := time.Now()
	var errs []string
	for i, w := range m.watched {
		if done[i] {
			continue
		}
		w.mu.Lock()
		down, err := w.down(now), w.readErr
		w.mu.Unlock()
		if !down {
			return false
		}
		errs = append(errs, fmt.Sprintf("replica %s is down (%v)", w.name, err))
	}
	m.opts.Notef("not waiting for the replicas to catch up after %s: %s", elapsed.Round(100*time.Millisecond), strings.Join(errs, "; "))
	return true
}

// ReadError is why the heartbeat reads of replica i (in the order given
// to StartMonitor) fail now; nil while they succeed.
func (m *Monitor) ReadError(i int) error {
	w := m.watched[i]
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.readErr
}

// status says, for a progress line, which replicas have not shown the
// beat and what their servers report; refused is set when a primary
// refuses a replica's output plugin just now.
func (m *Monitor) status(ctx context.Context, done []bool) (status string, refused error) {
	var parts []string
	for i, w := range m.watched {
		if done[i] {
			continue
		}
		w.mu.Lock()
		s := fmt.Sprintf("replica %s has not shown it", w.name)
		if w.seen < 0 {
			s = fmt.Sprintf("replica %s shows no heartbeat yet", w.name)
		}
		w.mu.Unlock()
		if w.rep.Trouble != nil {
			if err := w.rep.Trouble(ctx); err != nil {
				var pr *PluginRefusedError
				if errors.As(err, &pr) && pr.Now {
					return "", fmt.Errorf("replica %s: %w", w.name, err)
				}
				s += ": " + err.Error()
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; "), nil
}

// Advanced reports whether replica i (in the order given to StartMonitor)
// was read showing a newer beat than at its first read: it replicates the
// heartbeat, if slowly.
func (m *Monitor) Advanced(i int) bool {
	w := m.watched[i]
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first != -2 && w.seen > w.first
}

// LagStats is a replica's lag over a span of time, in seconds.
type LagStats struct {
	Name, Kind      string
	Max, P99, AtEnd float64
	Reads           int
	// Failed reads, and Unreadable the time they cover: each failed
	// read's span back to the read before it (or to the span's start).
	Failed     int
	Unreadable float64
}

// Stats summarises each replica's lag reads in [from, to], failed reads
// included (their lag is the age of the beats the replica was last seen to
// lack); AtEnd is the last read at or before to.
func (m *Monitor) Stats(from, to time.Time) []LagStats {
	var out []LagStats
	for _, w := range m.watched {
		w.mu.Lock()
		var lags []float64
		st := LagStats{Name: w.name, Kind: w.rep.Kind}
		prev := from
		for _, r := range w.read {
			if r.at.Before(from) || r.at.After(to) {
				if !r.at.After(to) {
					prev = r.at
				}
				continue
			}
			lags = append(lags, r.lag)
			st.AtEnd = r.lag
			if r.failed {
				st.Failed++
				if prev.Before(from) {
					prev = from
				}
				st.Unreadable += r.at.Sub(prev).Seconds()
			}
			prev = r.at
		}
		w.mu.Unlock()
		st.Reads = len(lags)
		if len(lags) > 0 {
			sort.Float64s(lags)
			st.Max = lags[len(lags)-1]
			st.P99 = lags[int(math.Ceil(0.99*float64(len(lags))))-1]
		}
		out = append(out, st)
	}
	return out
}

// Stop ends beating and reading (bounded by the reads' deadlines).
func (m *Monitor) Stop() {
	m.cancel()
	m.wg.Wait()
}

func isUndefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && slices.Contains([]string{"42P01"}, pe.Code)
}
