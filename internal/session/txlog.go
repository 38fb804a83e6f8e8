package session

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/pgerr"
)

// TxLog asks for pgbench's transaction logs (pgbench -l), in pgbench's own
// file formats and names, so that scripts parsing them keep working
// (PostgreSQL 17 docs, pgbench, "Per-Transaction Logging" and "Aggregated
// Logging"):
//
//	per transaction: client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
//	aggregated:      interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency
//	                 sum_lag sum_lag_2 min_lag max_lag skipped retried retries serialization_failures deadlock_failures
//
// One file per thread as pgbench names them: PREFIX.PID for thread 0,
// PREFIX.PID.N for thread N; clients are dealt to threads in contiguous
// blocks as pgbench does (thread i takes ceil(left clients / left threads)).
// script_no is the transaction type's index (pgbench's script number, from
// 0). Times are microseconds; time is "skipped" for a transaction skipped
// under -L, "failed" for a failure ("serialization", "deadlock" or "other"
// with FailuresDetailed). Where pgbench leaves a field out or at 0 (lag
// without -R, skipped without -L, retries with --max-tries 1, failures by
// class without --failures-detailed), so does this log.
//
// Two deliberate differences: every transaction the summary counts is
// logged, warm-up included; and the last, partial aggregation interval is
// written at the end (pgbench drops it), so that the aggregated counts add
// up to the run's summary.
type TxLog struct {
	// Prefix of the file names, default "pgbench_log"; may hold a
	// directory. Relative names are in the current directory.
	Prefix string
	// PID is the number in the file names (the pgarena process's id).
	PID int
	// Threads is the number of files (pgbench's -j): 1 up to the clients.
	Threads int
	// AggregateInterval makes the log aggregated (whole seconds); 0: one
	// line per transaction.
	AggregateInterval time.Duration
	// SamplingRate logs that share of transactions (0 or 1: all).
	SamplingRate float64
	// FailuresDetailed logs failures by class (--failures-detailed).
	FailuresDetailed bool
	// Throttled (-R) adds the schedule lag; LatencyLimit (-L) the skipped
	// count; MaxTries other than 1 the retries.
	Throttled    bool
	LatencyLimit bool
	MaxTries     int
	// Seed makes the sampling reproducible.
	Seed uint64
}

// Paths are the log files, one per thread, for clients clients.
func (l *TxLog) Paths(clients int) []string {
	prefix := l.Prefix
	if prefix == "" {
		prefix = "pgbench_log"
	}
	n := l.threads(clients)
	out := make([]string, n)
	for i := range n {
		out[i] = fmt.Sprintf("%s.%d", prefix, l.PID)
		if i > 0 {
			out[i] += "." + strconv.Itoa(i)
		}
	}
	return out
}

func (l *TxLog) threads(clients int) int {
	return max(1, min(l.Threads, clients))
}

// txLogWriter writes a TxLog: a driver.TxObserver. Each thread's file has
// its own lock, buffer and line scratch: a transaction costs a lock and a
// few appends, no allocation.
type txLogWriter struct {
	cfg      TxLog
	aggUS    int64
	byClient []int32 // client id -> thread
	threads  []*txLogThread
}

type txLogThread struct {
	mu      sync.Mutex
	f       *os.File
	w       *bufio.Writer
	line    []byte
	count   []int64 // per client of the run: transactions so far (pgbench's transaction_no)
	rng     *rand.Rand
	agg     txAgg
	started bool // agg.start is set
	closed  bool
	err     error
}

// txAgg is one aggregation interval.
type txAgg struct {
	start                     int64 // unix seconds
	n                         int64 // committed
	lat, lag                  moments
	skipped, retried, retries int64
	serialization, deadlock   int64
	other                     int64 // failures pgbench has no column for (counted, not written)
}

// moments are what pgbench's aggregated log keeps of a value (µs): its sum,
// sum of squares, minimum and maximum.
type moments struct{ sum, sum2, min, max float64 }

// add adds v, the first value when first.
func (m *moments) add(v float64, first bool) {
	if first || v < m.min {
		m.min = v
	}
	if first || v > m.max {
		m.max = v
	}
	m.sum += v
	m.sum2 += v * v
}

// openTxLog creates the files of l for clients clients (truncating
// existing ones, as pgbench does).
func openTxLog(l TxLog, clients int) (*txLogWriter, error) {
	w := &txLogWriter{cfg: l, aggUS: l.AggregateInterval.Microseconds(), byClient: make([]int32, clients)}
	paths := l.Paths(clients)
	left := clients
	next := 0
	for i, p := range paths {
		// pgbench deals clients to threads in contiguous blocks.
		n := (left + len(paths) - i - 1) / (len(paths) - i)
		for c := next; c < next+n; c++ {
			w.byClient[c] = int32(i)
		}
		next, left = next+n, left-n
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("transaction log: %w", err)
		}
		w.threads = append(w.threads, &txLogThread{f: f, w: bufio.NewWriterSize(f, 64<<10), line: make([]byte, 0, 256),
			count: make([]int64, clients), rng: rand.New(rand.NewPCG(l.Seed, uint64(i)+0x10c))})
	}
	return w, nil
}

// ObserveTx implements driver.TxObserver.
func (w *txLogWriter) ObserveTx(e driver.TxEvent) {
	if e.Client < 0 || e.Client >= len(w.byClient) {
		return
	}
	t := w.threads[w.byClient[e.Client]]
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return // a client abandoned at the end
	}
	t.count[e.Client]++
	if r := w.cfg.SamplingRate; r > 0 && r < 1 && t.rng.Float64() > r {
		return
	}
	if w.aggUS > 0 {
		w.aggregate(t, &e)
		return
	}
	t.line = w.appendLine(t.line[:0], t.count[e.Client], &e)
	if _, err := t.w.Write(t.line); err != nil && t.err == nil {
		t.err = err
	}
}

// appendLine appends e's per-transaction line.
func (w *txLogWriter) appendLine(b []byte, no int64, e *driver.TxEvent) []byte {
	b = strconv.AppendInt(b, int64(e.Client), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, no, 10)
	b = append(b, ' ')
	switch {
	case e.Skipped:
		b = append(b, "skipped"...)
	case e.Class != pgerr.ClassNone:
		b = append(b, w.failureWord(e.Class)...)
	default:
		b = strconv.AppendInt(b, e.End.Sub(e.Intended).Microseconds(), 10)
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(e.Type), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.End.Unix(), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(e.End.Nanosecond()/1000), 10)
	if w.cfg.Throttled {
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.Start.Sub(e.Intended).Microseconds(), 10)
	}
	if w.cfg.MaxTries != 1 {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(e.Retries), 10)
	}
	return append(b, '\n')
}

func (w *txLogWriter) failureWord(c pgerr.ErrorClass) string {
	if !w.cfg.FailuresDetailed {
		return "failed"
	}
	switch c {
	case pgerr.ClassSerialization:
		return "serialization"
	case pgerr.ClassDeadlock:
		return "deadlock"
	}
	return "other"
}

// aggregate adds e to its thread's interval, writing the intervals that
// ended before it (empty ones too, as pgbench does).
func (w *txLogWriter) aggregate(t *txLogThread, e *driver.TxEvent) {
	at := e.End.UnixMicro()
	if !t.started {
		// pgbench rounds the first interval's start down to a second.
		t.agg = txAgg{start: at / 1e6}
		t.started = true
	}
	for t.agg.start*1e6+w.aggUS <= at {
		w.writeAgg(t)
	}
	a := &t.agg
	if e.Retries > 0 {
		a.retried++
		a.retries += int64(e.Retries)
	}
	switch {
	case e.Skipped:
		a.skipped++
	case e.Class == pgerr.ClassSerialization:
		a.serialization++
	case e.Class == pgerr.ClassDeadlock:
		a.deadlock++
	case e.Class != pgerr.ClassNone:
		a.other++
	default:
		a.lat.add(float64(e.End.Sub(e.Intended).Microseconds()), a.n == 0)
		a.lag.add(float64(e.Start.Sub(e.Intended).Microseconds()), a.n == 0)
		a.n++
	}
}

// writeAgg writes the thread's interval and starts the next one.
func (w *txLogWriter) writeAgg(t *txLogThread) {
	a := &t.agg
	b := t.line[:0]
	b = strconv.AppendInt(b, a.start, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, a.n, 10)
	for _, v := range [4]float64{a.lat.sum, a.lat.sum2, a.lat.min, a.lat.max} {
		b = append(b, ' ')
		b = strconv.AppendFloat(b, v, 'f', 0, 64)
	}
	lag := [4]float64{}
	if w.cfg.Throttled {
		lag = [4]float64{a.lag.sum, a.lag.sum2, a.lag.min, a.lag.max}
	}
	for _, v := range lag {
		b = append(b, ' ')
		b = strconv.AppendFloat(b, v, 'f', 0, 64)
	}
	var skipped, retried, retries, ser, dead int64
	if w.cfg.LatencyLimit {
		skipped = a.skipped
	}
	if w.cfg.MaxTries != 1 {
		retried, retries = a.retried, a.retries
	}
	if w.cfg.FailuresDetailed {
		ser, dead = a.serialization, a.deadlock
	}
	for _, v := range [5]int64{skipped, retried, retries, ser, dead} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
	}
	b = append(b, '\n')
	t.line = b
	if _, err := t.w.Write(b); err != nil && t.err == nil {
		t.err = err
	}
	*a = txAgg{start: a.start + w.aggUS/1e6}
}

// Close writes the last (partial) intervals, flushes and closes the files;
// later transactions (of clients abandoned at the end) are dropped. The
// first write error is returned.
func (w *txLogWriter) Close() error {
	var first error
	for _, t := range w.threads {
		t.mu.Lock()
		if !t.closed {
			t.closed = true
			if w.aggUS > 0 && t.started {
				w.writeAgg(t)
			}
			if err := t.w.Flush(); err != nil && t.err == nil {
				t.err = err
			}
			if err := t.f.Close(); err != nil && t.err == nil {
				t.err = err
			}
		}
		if t.err != nil && first == nil {
			first = fmt.Errorf("transaction log %s: %w", t.f.Name(), t.err)
		}
		t.mu.Unlock()
	}
	return first
}

// absPaths makes paths absolute, for the run's record.
func absPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if a, err := filepath.Abs(p); err == nil {
			out[i] = a
		}
	}
	return out
}

// startObservers opens the transaction logs and the failure printer the
// spec asks for; close flushes and closes them.
func (r *run) startObservers() (closeAll func() error, err error) {
	var obs observers
	var logs *txLogWriter
	var verbose *verboseErrors
	if r.spec.TxLog != nil {
		l := *r.spec.TxLog
		if l.Seed == 0 {
			l.Seed = r.spec.Seed
		}
		if logs, err = openTxLog(l, r.spec.totalClients()); err != nil {
			return nil, err
		}
		obs = append(obs, logs)
	}
	if r.spec.Hooks.VerboseError != nil {
		verbose = &verboseErrors{print: r.spec.Hooks.VerboseError, txNames: r.txNames(), maxTries: max(r.spec.Groups[0].MaxTries, 1)}
		obs = append(obs, verbose)
	}
	switch len(obs) {
	case 0:
	case 1:
		r.observer = obs[0]
	default:
		r.observer = obs
	}
	return func() error {
		if verbose != nil {
			verbose.finish()
		}
		if logs != nil {
			return logs.Close()
		}
		return nil
	}, nil
}

// txNames are the Recorder's transaction type names ("group/type" with
// several groups).
func (r *run) txNames() []string {
	var names []string
	for _, g := range r.spec.Groups {
		for _, t := range g.Workload.TxTypes() {
			if len(r.spec.Groups) > 1 {
				t = g.Name + "/" + t
			}
			names = append(names, t)
		}
	}
	return names
}
