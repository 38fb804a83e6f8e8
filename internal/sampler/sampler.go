package sampler

import (
	"context"
	"errors"
	"fmt"
	"github.com/pgarena/pgarena/internal/clock"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/store"
)

// Options configure a Sampler.
type Options struct {
	// ConnConfig is the server to watch (copied; application_name is set to
	// pgarena-sampler). Nil watches the host (and server log) only.
	ConnConfig *pgx.ConnConfig
	// Interval between samples; default 1 s, at least 10 ms.
	Interval time.Duration
	// DBHostLocal says the server runs on this host (embedded cluster,
	// --db-host-local): host samples are labelled as the server's too.
	DBHostLocal bool
	// DataDir, if set and local, names the data directory so the device
	// holding it is labelled in host_disk samples.
	DataDir string
	// ServerLogPath, if set, is the server's log file: lines appended after
	// Start are counted by level and kind.
	ServerLogPath string
	// Sink receives each batch of samples, from the sampler's goroutine.
	// The slice and its samples are not used by the sampler afterwards.
	Sink func([]store.Sample)
	// TopN bounds the wait events and statements reported per sample;
	// default 5.
	TopN int
	// QueryTimeout bounds each server query and connection attempt (the
	// server sources' queries, sent in one round trip, have it once per
	// query); default the interval, clamped to [500 ms, 5 s].
	QueryTimeout time.Duration
	// Pooler, if set, is a pooler in front of the server: its statistics
	// are sampled too (pooler.go).
	Pooler *Pooler
	// CitusWorkers, if set, are a Citus coordinator's workers: each is
	// sampled too (citus.go).
	CitusWorkers []CitusWorker
}

// AppName is the application_name of the sampler's connection.
const AppName = "pgarena-sampler"

// stopWait bounds how long Stop waits for a tick in progress.
const stopWait = 15 * time.Second

// Sampler samples the server and the host until Stop.
type Sampler struct {
	opts   Options
	cancel context.CancelFunc
	done   chan struct{}
	align  chan time.Time // from Align
	alarm  clock.Alarm    // the loop's wait; nil: a timer

	srv   *server // nil without ConnConfig
	host  *host
	log   *logScanner   // nil without ServerLogPath
	pool  *poolerSource // nil without Pooler
	citus *citusSource  // nil without CitusWorkers
	an    *analyzer

	stopOnce sync.Once
	findings []store.Finding

	marksMu sync.Mutex
	marks   []time.Time // step starts, from MarkStep
	steady  []Window    // from MarkSteady
	// steadySet: MarkSteady was called (perhaps with no window)
	steadySet bool
}

// MarkStep records that a step of a sweep starts at at (call it at each
// step's start, the first included). The findings then judge each step on
// its own where a whole-run view would mistake the sweep for drift: "not
// steady" compares the thirds of a step, not of the run. Safe to call from
// any goroutine while sampling.
func (s *Sampler) MarkStep(at time.Time) {
	s.marksMu.Lock()
	s.marks = append(s.marks, at)
	s.marksMu.Unlock()
}

// Window is a stretch of a run under one constant load: all clients
// started, warm-up over, and (open loop) one constant target rate. Label
// begins the finding's message ("step 2: ").
type Window struct {
	Label    string
	From, To time.Time
}

// MarkSteady gives windows of constant load (call it once a step has run;
// none when the step had no such stretch, a rising --schedule). Once it is
// called, "not steady" compares the thirds of each window only, like with
// like: a ramp, a warm-up or a changing target rate is not drift. Safe to
// call from any goroutine while sampling.
func (s *Sampler) MarkSteady(ws ...Window) {
	s.marksMu.Lock()
	s.steady = append(s.steady, ws...)
	s.steadySet = true
	s.marksMu.Unlock()
}

// Start connects to the server (if opts.ConnConfig is set), takes a first
// sample and samples every opts.Interval until Stop or until ctx ends. It
// fails only when the server cannot be reached; missing sources are notes.
func Start(ctx context.Context, opts Options) (*Sampler, error) {
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	if opts.Interval < 10*time.Millisecond {
		return nil, fmt.Errorf("sample interval must be at least 10ms (got %s)", opts.Interval)
	}
	if opts.TopN <= 0 {
		opts.TopN = 5
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = min(max(opts.Interval, 500*time.Millisecond), 5*time.Second)
	}
	s := &Sampler{opts: opts, done: make(chan struct{}), align: make(chan time.Time, 1), an: newAnalyzer(opts.DBHostLocal || opts.ConnConfig != nil && hostIsLocal(opts.ConnConfig.Host))}
	if opts.ConnConfig != nil {
		srv, err := newServer(ctx, opts)
		if err != nil {
			return nil, err
		}
		s.srv = srv
	}
	s.host = newHost(opts.DBHostLocal, opts.DataDir)
	if opts.ServerLogPath != "" {
		s.log = newLogScanner(opts.ServerLogPath)
	}
	if opts.Pooler != nil {
		s.pool = newPoolerSource(ctx, opts)
	}
	if len(opts.CitusWorkers) > 0 {
		s.citus = newCitusSource(opts.CitusWorkers, opts.QueryTimeout, opts.TopN)
	}
	loopCtx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	s.alarm = clock.NewAlarm(clock.Real())
	go s.loop(loopCtx)
	return s, nil
}

// Align makes the following samples fall at phase + k·Interval: given the
// start of the run's intervals, the sampler wakes with the run's ticker,
// and an idle process wakes once a tick, not twice. Safe to call from any
// goroutine while sampling; the last call wins.
func (s *Sampler) Align(phase time.Time) {
	for sent := false; !sent; {
		select {
		case s.align <- phase:
			sent = true
		default:
			select { // replace the phase not yet taken
			case <-s.align:
			default:
			}
		}
	}
	if s.alarm != nil {
		s.alarm.Ring() // the loop takes the phase now
	}
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	every, phase := s.opts.Interval, time.Now()
	s.tick(ctx)
	if s.alarm != nil && s.alarmLoop(ctx, &phase) {
		return
	}
	t := time.NewTimer(untilNext(phase, every, time.Now()))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case phase = <-s.align:
			t.Reset(untilNext(phase, every, time.Now()))
			continue
		case <-t.C:
		}
		s.tick(ctx)
		t.Reset(untilNext(phase, every, time.Now()))
	}
}

// alarmLoop samples with waits on s.alarm, which keeps them out of Go's
// timers: a client parked on a slow answer then waits in epoll_pwait with
// no timeout (clock.Alarm). Align rings it, so a new phase is taken at
// once. It returns true when stopped, false if the alarm failed (the
// timer takes over).
func (s *Sampler) alarmLoop(ctx context.Context, phase *time.Time) bool {
	a := s.alarm
	stop := context.AfterFunc(ctx, func() { a.Close() })
	defer stop()
	defer a.Close()
	for {
		select {
		case *phase = <-s.align:
		default:
		}
		d := untilNext(*phase, s.opts.Interval, time.Now())
		due := time.Now().Add(d)
		if a.Wait(d) != nil {
			return ctx.Err() != nil
		}
		if time.Now().Before(due) {
			continue // rung by Align before its time: wait for the new phase
		}
		s.tick(ctx)
	}
}

// untilNext is how long from now until the first phase + k·every after
// now (k any integer): a tick that took longer than every skips the
// times it missed.
func untilNext(phase time.Time, every time.Duration, now time.Time) time.Duration {
	r := now.Sub(phase) % every
	if r < 0 {
		r += every
	}
	return every - r
}

// tick takes one batch of samples and hands it to the sink.
func (s *Sampler) tick(ctx context.Context) {
	now := time.Now()
	var batch []store.Sample
	batch = append(batch, s.host.sample(now)...)
	if s.srv != nil {
		batch = append(batch, s.srv.sample(ctx, now)...)
	}
	if s.log != nil {
		batch = append(batch, s.log.sample(now)...)
	}
	if s.pool != nil {
		batch = append(batch, s.pool.sample(ctx, now)...)
	}
	if s.citus != nil {
		batch = append(batch, s.citus.sample(ctx, now)...)
	}
	if ctx.Err() != nil {
		return // stopped mid-tick: a partial batch would draw as a dip
	}
	s.emit(batch)
}

func (s *Sampler) emit(batch []store.Sample) {
	if len(batch) == 0 {
		return
	}
	s.an.add(batch)
	if s.opts.Sink != nil {
		s.opts.Sink(batch)
	}
}

// Stop ends sampling, waits for a tick in progress (bounded: queries have
// deadlines), counts the last server log lines, closes the connection and
// returns the findings of the run, most severe first. Later calls return
// the same findings.
func (s *Sampler) Stop() []store.Finding {
	s.stopOnce.Do(func() {
		s.cancel()
		select {
		case <-s.done:
		case <-time.After(stopWait):
			// A tick is stuck past every deadline: report what there is
			// without touching the state that goroutine owns.
			s.findings = []store.Finding{{Severity: store.SeverityWarning, Kind: "sampler_stuck",
				Message: "the sampler did not stop in time; its findings are incomplete"}}
			return
		}
		s.host.close()
		if s.log != nil {
			s.emit(s.log.sample(time.Now()))
			s.log.close()
		}
		var srvTotals *totals
		if s.srv != nil {
			srvTotals = s.srv.totals()
			s.srv.close()
		}
		var logTotals map[string]float64
		if s.log != nil {
			logTotals = s.log.totals
		}
		s.marksMu.Lock()
		s.an.stepStarts = append([]time.Time(nil), s.marks...)
		s.an.steady, s.an.steadySet = nil, s.steadySet
		for _, w := range s.steady {
			// a sample's rate covers the interval before it: the first
			// one wholly inside the window ends an interval after its start
			w.From = w.From.Add(s.opts.Interval)
			s.an.steady = append(s.an.steady, w)
		}
		s.marksMu.Unlock()
		s.findings = s.an.findings(srvTotals, logTotals)
		if s.pool != nil {
			s.findings = bySeverity(append(s.findings, s.pool.findings()...))
			s.pool.close()
		}
		if s.citus != nil {
			s.findings = bySeverity(append(s.findings, s.citus.findings()...))
			s.citus.close()
		}
	})
	return s.findings
}

// errSkip marks a source that is not available: its message is the note.
var errSkip = errors.New("skipped")

// hostIsLocal reports whether a server address is on this host: a Unix
// socket directory, localhost or a loopback address. What listens there
// (the server, a pooler, a tunnel) shares this host's CPUs with pgarena.
func hostIsLocal(host string) bool {
	if strings.HasPrefix(host, "/") || strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
