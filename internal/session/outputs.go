package session

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/gostack"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// Record is one thing a run produces, handed to every Output in the order
// it was made: exactly one field is set. Start comes first; End last, once
// the summary is recorded, and only for a run that reached its end (not
// one that failed or was interrupted before).
type Record struct {
	Start    *RunStart         // the run is recorded and its server described
	Interval *metrics.Interval // one tick of the load
	Samples  []store.Sample    // server and host samples
	Step     *StepStart        // a sweep step begins
	End      *RunEnd           // the summary and findings, as recorded
}

// RunStart names the run and what it runs against.
type RunStart struct {
	ID     string
	Spec   store.RunSpec
	Server store.ServerInfo
}

// RunEnd is the run's recorded outcome.
type RunEnd struct {
	Summary  metrics.Summary
	Findings []store.Finding
	// Histograms are the run's full latency histograms, as its
	// histograms.hlog holds them (nil for a run that failed before them).
	Histograms *metrics.Accumulator
}

// StepStart announces step N of Of.
type StepStart struct {
	N, Of int
	Step  Step
}

// Output consumes a run's records. Each output has a goroutine and a queue
// of its own, so a slow output delays only itself; Write is never called
// concurrently for one output. Records are shared: read them, do not
// change them. An error is reported once; the output keeps receiving. An
// output that is also an io.Closer is closed on its own goroutine after its
// last record (its error is reported too).
type Output interface {
	Write(Record) error
}

// A Borrower is an Output that reads a Record only within Write and keeps
// nothing of it afterwards (no pointer into it or its interval's
// histograms). An interval's histograms are reused for a later interval
// once every output that received it has written it, if all of them are
// Borrowers; another output keeps them (they are freed with the interval).
type Borrower interface {
	Output
	BorrowsRecords()
}

// SampleSkipper is an Output that does nothing with Samples records: they
// are not queued for it, so its goroutine does not wake at each tick of
// the samplers.
type SampleSkipper interface {
	Output
	SkipsSamples()
}

// OutputFunc adapts a function to Output.
type OutputFunc func(Record) error

// Write calls f.
func (f OutputFunc) Write(r Record) error { return f(r) }

// Drain deadlines: how long the end of a run waits for outputs to catch up.
// The store gets longer: it is the durable record.
const (
	drainWait        = 15 * time.Second
	durableDrainWait = 2 * time.Minute
	// backlogNote is the queue length at which an output is reported slow.
	backlogNote = 30
)

// fanout hands records to outputs without ever blocking the publisher.
type fanout struct {
	notef  func(string, ...any)
	queues []*outQueue

	mu       sync.Mutex
	problems []string // what went wrong with outputs, for the end of the run
}

// outQueue is one output's unbounded queue and goroutine.
type outQueue struct {
	out       Output
	durable   bool
	borrows   bool // a Borrower: its intervals are released after Write
	noSamples bool // a SampleSkipper
	name      string

	mu      sync.Mutex
	cond    *sync.Cond
	items   []Record
	closed  bool
	noted   bool // reported as slow
	errSeen bool
	waited  bool // close has waited for it
	done    chan struct{}
}

func newFanout(notef func(string, ...any), outs ...Output) *fanout {
	f := &fanout{notef: notef}
	for i, o := range outs {
		f.addOutput(o, i == 0)
	}
	return f
}

func (f *fanout) addOutput(o Output, durable bool) {
	_, borrows := o.(Borrower)
	_, noSamples := o.(SampleSkipper)
	q := &outQueue{out: o, durable: durable, borrows: borrows, noSamples: noSamples, name: outputName(o), done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	f.queues = append(f.queues, q)
	go q.loop(f.note)
}

// note passes a note on and keeps it for the end of the run.
func (f *fanout) note(format string, args ...any) {
	f.mu.Lock()
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
	f.mu.Unlock()
	f.notef(format, args...)
}

// outputProblems lists what went wrong with outputs (slow, failed, not
// drained), in the order it happened.
func (f *fanout) outputProblems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.problems...)
}

// publish queues r for every output still open (samples only for those
// that use them). It never waits for an output.
func (f *fanout) publish(r Record) {
	for _, q := range f.queues {
		if r.Samples != nil && q.noSamples {
			continue
		}
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			continue
		}
		if r.Interval != nil {
			r.Interval.Retain() // released after Write by a Borrower
		}
		q.items = append(q.items, r)
		slow := len(q.items) >= backlogNote && !q.noted
		if slow {
			q.noted = true
		}
		q.cond.Signal()
		q.mu.Unlock()
		if slow {
			f.note("output %s is %d records behind: it is slower than the run (the load is not held up)", q.name, backlogNote)
		}
	}
}

func (q *outQueue) loop(notef func(string, ...any)) {
	gostack.At8K() // encoding intervals reaches 8 KB
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.items) == 0 {
			q.mu.Unlock()
			if c, ok := q.out.(io.Closer); ok {
				if err := c.Close(); err != nil {
					notef("output %s failed: %v", q.name, err)
				}
			}
			return
		}
		r := q.items[0]
		q.items[0] = Record{}
		q.items = q.items[1:]
		q.mu.Unlock()
		if err := q.out.Write(r); err != nil && !q.errSeen {
			q.errSeen = true
			notef("output %s failed: %v", q.name, err)
		}
		if q.borrows && r.Interval != nil {
			r.Interval.Release()
		}
	}
}

// close lets every output finish its queue, waiting at most the drain
// deadlines, and reports those that did not.
func (f *fanout) close() { f.closeFirst(len(f.queues)) }

// closeFirst closes the first n queues (the run's own outputs come first)
// and waits for them as close does; a queue already waited for is skipped.
func (f *fanout) closeFirst(n int) {
	qs := make([]*outQueue, 0, n)
	for _, q := range f.queues[:n] {
		if !q.waited {
			q.waited = true
			qs = append(qs, q)
		}
	}
	for _, q := range qs {
		q.mu.Lock()
		q.closed = true
		q.cond.Signal()
		q.mu.Unlock()
	}
	start := time.Now()
	for _, q := range qs {
		wait := drainWait
		if q.durable {
			wait = durableDrainWait
		}
		t := time.NewTimer(max(wait-time.Since(start), 0))
		select {
		case <-q.done:
		case <-t.C:
			q.mu.Lock()
			left := len(q.items)
			q.mu.Unlock()
			f.note("output %s did not finish within %s of the end (%d records left)", q.name, wait, left)
		}
		t.Stop()
	}
}

// storeOutput appends intervals and samples to the run's directory: the
// durable output (fsynced within 10 s: store's syncEvery).
type storeOutput struct {
	w     *store.Writer
	notef func(string, ...any)
	// diskFull is called once when the results disk is full.
	diskFull func(error)

	mu  sync.Mutex
	err error // the first interval that could not be recorded
}

func (s *storeOutput) Write(r Record) error {
	switch {
	case r.Interval != nil:
		if err := s.w.AppendIntervals(*r.Interval); err != nil {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.err == nil {
				s.err = err
				if errors.Is(err, store.ErrDiskFull) && s.diskFull != nil {
					s.diskFull(err) // the run ends saying so
				} else {
					s.notef("could not record interval %d: %v", r.Interval.Seq, err)
				}
			}
		}
	case r.Samples != nil:
		if err := s.w.AppendSamples(r.Samples...); err != nil {
			s.notef("could not record samples: %v", err)
		}
	}
	return nil
}

func (s *storeOutput) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// closeOutputs closes the outputs that are io.Closers, for a run that
// ended before they received anything.
func closeOutputs(outs []Output, notef func(string, ...any)) {
	for _, o := range outs {
		if c, ok := o.(io.Closer); ok {
			if err := c.Close(); err != nil {
				notef("output %s failed: %v", outputName(o), err)
			}
		}
	}
}

// outputName names an output in notes: its String method, else its type.
func outputName(o Output) string {
	if s, ok := o.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", o)
}

func (s *storeOutput) String() string { return "results store" }

// BorrowsRecords: Write encodes the interval and keeps nothing of it.
func (s *storeOutput) BorrowsRecords() {}
