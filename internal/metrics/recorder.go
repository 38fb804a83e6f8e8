package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgarena/pgarena/internal/pgerr"
)

// Histogram bounds: microseconds from 1 µs to 1 hour, 3 significant digits.
// Values above the bound are recorded as the bound.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
)

// NewHistogram returns an empty latency histogram with pgarena's bounds.
func NewHistogram() *hdr.Histogram {
	return hdr.New(histLowest, histHighest, histDigits)
}

func recordMicros(h *hdr.Histogram, us int64) { _ = h.RecordValue(clampMicros(us)) } // cannot fail within the range

// clampMicros clamps us into the histograms' range.
func clampMicros(us int64) int64 {
	return min(max(us, histLowest), histHighest)
}

// Recorder collects the measurements of all clients of a run and cuts them
// into Intervals. Tick must be called from one goroutine at a time.
type Recorder struct {
	txNames  []string
	txGroups []string // client group of each type; empty without groups

	mu      sync.Mutex // guards handles (appended on client start, not on the hot path)
	handles []*Handle

	seq       int
	lastTick  time.Time
	warmupEnd time.Time
	// buckets collect the non-empty buckets of each type's latency and
	// service histograms during Tick (reused: owned by the ticking
	// goroutine).
	buckets []tickBuckets
	// pool, when set, holds the histograms Tick reuses; held is the lease
	// of the interval Tick returned last (ReuseHistograms).
	pool *histPool
	held *lease
}

type tickBuckets struct{ latency, service bucketSet }

// NewRecorder returns a Recorder for the given transaction types whose first
// interval starts at start.
func NewRecorder(txNames []string, start time.Time) *Recorder {
	return &Recorder{txNames: append([]string(nil), txNames...), lastTick: start}
}

// AddGroup adds a client group's transaction types, named "group/type",
// and returns the index of the first (the group's base for Record). Call it
// before the first NewHandle.
func (r *Recorder) AddGroup(group string, txNames []string) int {
	base := len(r.txNames)
	for len(r.txGroups) < base {
		r.txGroups = append(r.txGroups, "")
	}
	for _, n := range txNames {
		r.txNames = append(r.txNames, group+"/"+n)
		r.txGroups = append(r.txGroups, group)
	}
	return base
}

// Begin sets the start of the first interval (the moment measurement
// starts, after initial connections). Call it before the first Tick.
func (r *Recorder) Begin(t time.Time) { r.lastTick = t }

// TxNames returns the transaction types, indexed as in Record.
func (r *Recorder) TxNames() []string { return r.txNames }

// SetWarmupEnd flags the intervals before t as warm-up (those whose
// midpoint is before t).
func (r *Recorder) SetWarmupEnd(t time.Time) { r.warmupEnd = t }

// NewHandle returns a Handle for one client. A Handle has one writer.
func (r *Recorder) NewHandle() *Handle {
	h := &Handle{}
	r.InitHandle(h)
	return h
}

// InitHandle makes the zero Handle h one of r's, as NewHandle does: a
// client may keep its Handle inside its own struct, next to the fields it
// touches per transaction (one cache line fewer per Record). h must not
// move or be copied afterwards.
func (r *Recorder) InitHandle(h *Handle) {
	h.spare = newBuffer(len(r.txNames))
	h.cur.Store(newBuffer(len(r.txNames)))
	r.mu.Lock()
	r.handles = append(r.handles, h)
	r.mu.Unlock()
}

// Handle records the outcomes of one client. Its methods must be called from
// a single goroutine; Recorder.Tick may run concurrently. Make one with
// NewHandle or InitHandle.
type Handle struct {
	// seq is odd while the writer is inside a record (see Tick).
	seq   atomic.Uint64
	cur   atomic.Pointer[buffer]
	spare *buffer // owned by the ticking goroutine
}

type buffer struct{ tx []txBuffer }

type txBuffer struct {
	// samples of committed transactions, one element per transaction:
	// latency and service time side by side, so a Record writes one
	// cache line of them, not two
	samples []sample
	stmts   []StmtStat // per-command times (-r)
	// rare is made by the first record that needs it (nil: none yet), so
	// a client whose transactions only commit carries no failure counts:
	// a txBuffer is 56 bytes, not 272 (a client has two per type: 4.5 MB
	// fewer at 10,000 clients of one type).
	rare *txRare
}

// txRare is what a txBuffer counts besides commits.
type txRare struct {
	errors   ErrorCounts
	examples ErrorExamples // first and last failure per class
	retries  int64
	retried  int64 // transactions retried at least once
	skipped  int64
	late     int64
	// unfinished: running when the measured time ended
	unfinished Unfinished
}

// rareOf returns t's txRare, made on first use.
func (t *txBuffer) rareOf() *txRare {
	if t.rare == nil {
		t.rare = new(txRare)
	}
	return t.rare
}

// sample is one committed transaction's times in µs, clamped into the
// histograms' range (an hour fits 32 bits): latency (end − intended start)
// and service time (end − start). 8 bytes, not 16: a client's samples of
// one interval are most of its recording memory.
type sample struct{ latency, service uint32 }

// micros32 is d in whole µs within the histograms' range.
func micros32(d time.Duration) uint32 { return uint32(clampMicros(int64(d / time.Microsecond))) }

func newBuffer(n int) *buffer { return &buffer{tx: make([]txBuffer, n)} }

func (b *buffer) reset() {
	for i := range b.tx {
		t := &b.tx[i]
		t.samples = t.samples[:0]
		if r := t.rare; r != nil {
			*r = txRare{examples: r.examples[:0]}
		}
		clear(t.stmts)
	}
}

// Record records one finished transaction of type tx: intended is when it
// was due to start (equal to start in a closed loop), start when it was sent,
// end when its outcome was known. class is pgerr.ClassNone for a commit; a failure
// is counted in its class and never as done.
func (h *Handle) Record(tx int, intended, start, end time.Time, class pgerr.ErrorClass) {
	if class == pgerr.ClassNone {
		h.Done(tx, end.Sub(intended), end.Sub(start))
		return
	}
	h.seq.Add(1)
	h.cur.Load().tx[tx].rareOf().errors[class]++
	h.seq.Add(1)
}

// Done records one committed transaction of type tx by its latency (end
// minus intended start) and service time (end minus start), as Record
// does. Three words of arguments, not Record's eleven: the driver's client
// loop, at the bottom of every client's stack, keeps no room for them.
func (h *Handle) Done(tx int, latency, service time.Duration) {
	h.seq.Add(1)
	t := &h.cur.Load().tx[tx]
	t.samples = append(t.samples, sample{micros32(latency), micros32(service)})
	h.seq.Add(1)
}

// Fail records one failed transaction of type tx, of class (not
// pgerr.ClassNone), with what the failure said: it is counted in its class and
// kept as the class's first or last failure of the interval. Record with a
// class counts a failure without its text.
func (h *Handle) Fail(tx int, class pgerr.ErrorClass, d pgerr.ErrorDetail) {
	h.seq.Add(1)
	t := h.cur.Load().tx[tx].rareOf()
	t.errors[class]++
	t.examples.Note(class, d)
	h.seq.Add(1)
}

// Retry counts one retried attempt of a transaction of type tx that failed
// with class (a serialization failure or deadlock under --max-tries);
// first says it is the transaction's first retry (pgbench counts the
// transactions retried apart from the retries).
func (h *Handle) Retry(tx int, class pgerr.ErrorClass, first bool) {
	h.seq.Add(1)
	t := h.cur.Load().tx[tx].rareOf()
	t.retries++
	if first {
		t.retried++
	}
	h.seq.Add(1)
}

// Skip counts a scheduled transaction of type tx that was not started
// because it was already later than the latency limit (pgbench -L).
func (h *Handle) Skip(tx int) {
	h.seq.Add(1)
	h.cur.Load().tx[tx].rareOf().skipped++
	h.seq.Add(1)
}

// Late counts a committed transaction of type tx whose latency exceeded
// the latency limit; it is also recorded by Record.
func (h *Handle) Late(tx int) {
	h.seq.Add(1)
	h.cur.Load().tx[tx].rareOf().late++
	h.seq.Add(1)
}

// Statement records that command i of a transaction of type tx took d
// (per-statement latencies, pgbench -r).
func (h *Handle) Statement(tx, i int, d time.Duration) {
	h.seq.Add(1)
	t := &h.cur.Load().tx[tx]
	for len(t.stmts) <= i {
		t.stmts = append(t.stmts, StmtStat{})
	}
	t.stmts[i].Count++
	t.stmts[i].SumNS += int64(d)
	h.seq.Add(1)
}

// StatementFailed counts a failure of command i of a transaction of type
// tx (pgbench -r's per-command failures, or its retries when retried).
func (h *Handle) StatementFailed(tx, i int, retried bool) {
	h.seq.Add(1)
	t := &h.cur.Load().tx[tx]
	for len(t.stmts) <= i {
		t.stmts = append(t.stmts, StmtStat{})
	}
	if retried {
		t.stmts[i].Retries++
	} else {
		t.stmts[i].Failures++
	}
	h.seq.Add(1)
}

// swap installs the spare buffer and returns the one the writer used, once
// the writer is no longer inside a record that may have loaded it.
func (h *Handle) swap() *buffer {
	old := h.cur.Swap(h.spare)
	if s := h.seq.Load(); s%2 == 1 {
		// The writer is inside a record that may hold old; a record that
		// starts after the swap loads the new buffer. Wait for this one to
		// end: it is a few hundred nanoseconds of work.
		for h.seq.Load() == s {
			spinWait()
		}
	}
	return old
}

// Tick closes the current interval at now and returns it. With
// ReuseHistograms, the previous interval's histograms are reused from here
// on unless retained.
func (r *Recorder) Tick(now time.Time) Interval {
	r.mu.Lock()
	handles := append([]*Handle(nil), r.handles...)
	r.mu.Unlock()

	r.seq++
	iv := Interval{
		Seq:   r.seq,
		Start: r.lastTick,
		End:   now,
		Tx:    make([]TxStats, len(r.txNames)),
	}
	// An interval is warm-up if most of it is: its midpoint comes before
	// the end of the warm-up (ticks land a little after their due time).
	iv.Warmup = !r.warmupEnd.IsZero() && r.lastTick.Add(now.Sub(r.lastTick)/2).Before(r.warmupEnd)
	hists, l := r.lend(len(r.txNames))
	iv.lease = l
	for i, name := range r.txNames {
		iv.Tx[i] = TxStats{Name: name, Latency: hists[2*i], Service: hists[2*i+1]}
		if i < len(r.txGroups) {
			iv.Tx[i].Group = r.txGroups[i]
		}
	}
	for len(r.buckets) < len(r.txNames) {
		r.buckets = append(r.buckets, tickBuckets{})
	}
	for _, h := range handles {
		b := h.swap()
		for i := range b.tx {
			t, s, tb := &b.tx[i], &iv.Tx[i], &r.buckets[i]
			// Values go to the bucket sets only; the histograms get the
			// sets' buckets below, one RecordValues per non-empty bucket
			// (the same counts, with a third of the scattered writes).
			for _, v := range t.samples {
				tb.latency.add(int64(v.latency))
				tb.service.add(int64(v.service))
			}
			s.Count += int64(len(t.samples))
			if r := t.rare; r != nil {
				s.Errors.Add(&r.errors)
				s.Examples.Merge(r.examples)
				s.Retries += r.retries
				s.Retried += r.retried
				s.Skipped += r.skipped
				s.Late += r.late
				s.Unfinished.add(&r.unfinished)
			}
			if len(t.stmts) > 0 {
				s.Statements = addStmts(s.Statements, t.stmts)
			}
		}
		b.reset()
		h.spare = b
	}
	for i := range iv.Tx {
		s := &iv.Tx[i]
		s.latBuckets = r.buckets[i].latency.take()
		s.svcBuckets = r.buckets[i].service.take()
		recordBuckets(s.Latency, s.latBuckets)
		recordBuckets(s.Service, s.svcBuckets)
	}
	r.lastTick = now
	return iv
}
