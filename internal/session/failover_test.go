package session

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/replica"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
)

// faultSlack bounds how much later than asked a fault comes: the time
// it takes to begin (the heartbeat's stop).
const faultSlack = 0.5

// failoverRun runs tpcb for 8 s (after a 0.5 s warm-up) on an embedded
// primary with a streaming standby (primary settings over the test's),
// with a failover 1.5 s into the measured time (6.5 s left: room for a
// loaded host), the spec as edit leaves it and outs.
func failoverRun(t *testing.T, ctx context.Context, settings map[string]string, edit func(*Spec), outs ...Output) (Result, *store.Run) {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := local.Env(os.Environ())
	bin, err := local.FindBinaries("", env)
	if err != nil {
		t.Skip(err)
	}
	all := map[string]string{"fsync": "off", "shared_buffers": "32MB"}
	for k, v := range settings {
		all[k] = v
	}
	p := &replica.Provider{Kind: "streaming", Env: env, Notef: t.Logf,
		Inner: &local.Ephemeral{Bin: bin, Env: env, Settings: all}}
	spec := Spec{
		Groups:   []Group{{Name: "tpcb", Workload: tpcbWorkload(t, tpcb.ScriptTPCBLike), Clients: 2, QueryMode: "prepared"}},
		Duration: 8 * time.Second, Warmup: 500 * time.Millisecond, Tick: 250 * time.Millisecond, Seed: 1, Init: true, LoadWorkers: 2,
		Hooks:          Hooks{Notef: t.Logf},
		CatchUpTimeout: time.Minute,
		Failover:       &Failover{After: 1500 * time.Millisecond, Timeout: time.Minute},
		MaxErrorRate:   1,
	}
	if edit != nil {
		edit(&spec)
	}
	res, err := Run(ctx, spec, p, st, outs...)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return res, run
}

// failoverSamples are the times of a run's failover events (samples).
func failoverSamples(run *store.Run) map[string]time.Time {
	at := map[string]time.Time{}
	for _, s := range run.Samples {
		if s.Source == metrics.FailoverSource {
			for k := range s.Values {
				at[k] = s.Time
			}
		}
	}
	return at
}

// runFailover runs failoverRun's failover: the fault comes After into
// the measured time (after the clients connected and the warm-up), the
// standby is promoted.
func runFailover(t *testing.T, settings map[string]string) (*metrics.Failover, *store.Run) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, run := failoverRun(t, ctx, settings, nil)
	fo := res.Summary.Failover
	if fo == nil || fo.Problem != "" {
		t.Fatalf("failover %+v", fo)
	}
	t.Logf("failover: %+v", *fo)
	// The fault comes After (1.5 s) into the measured time, later only by
	// the time it takes to begin.
	if fo.FaultAtS < 1.5 || fo.FaultAtS > 1.5+faultSlack || fo.DowntimeS <= 0 || fo.DowntimeS > fo.PromotedS+2 || fo.LedgerAcked == 0 {
		t.Errorf("fault at %.3f s, promoted after %.2f s, downtime %.2f s, %d acknowledged", fo.FaultAtS, fo.PromotedS, fo.DowntimeS, fo.LedgerAcked)
	}
	// The summary's start is the warm-up's; the clients connected before.
	if d := failoverSamples(run)[metrics.FailoverFault].Sub(res.Summary.Start).Seconds(); d < 0.5+1.5 || d > 0.5+1.5+faultSlack {
		t.Errorf("fault %.3f s after the start of the 0.5 s warm-up, want 1.5 s after its end", d)
	}
	if fo.Fault != "immediate shutdown" || fo.Promotion != "pg_promote" {
		t.Errorf("fault %q, promotion %q", fo.Fault, fo.Promotion)
	}
	if res.Summary.Transactions == 0 || res.Summary.Replication != nil {
		t.Errorf("%d transactions; replication %+v (no catch-up after a failover)", res.Summary.Transactions, res.Summary.Replication)
	}
	if run.Summary.Failover == nil || run.Summary.Failover.LedgerAcked != fo.LedgerAcked {
		t.Errorf("stored failover %+v", run.Summary.Failover)
	}
	return fo, run
}

// TestFailoverNotAfterStop: a run that stops about 0.5 s into the
// measured time, by an autostop or an interrupt (Ctrl-C), before its
// failover is due (4 s) has none, and its summary says so.
func TestFailoverNotAfterStop(t *testing.T) {
	rule, err := driver.ParseRule("tps>=0 for 1s") // the 0.5 s warm-up counts
	if err != nil {
		t.Fatal(err)
	}
	for _, interrupt := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		var outs []Output
		if interrupt {
			outs = []Output{&interruptAt{cancel: cancel, after: 500 * time.Millisecond}}
		}
		edit := func(s *Spec) {
			s.Failover.After = 4 * time.Second
			if !interrupt {
				s.Autostop = []driver.Rule{rule}
			}
		}
		res, run := failoverRun(t, ctx, nil, edit, outs...)
		fo := res.Summary.Failover
		if !res.Stopped || res.Autostopped == interrupt || fo == nil {
			t.Fatalf("interrupt %v: stopped %v, autostopped %v, failover %+v", interrupt, res.Stopped, res.Autostopped, fo)
		}
		t.Logf("interrupt %v: measured %.2f s; failover: %+v", interrupt, res.Summary.DurationS, *fo)
		if res.Summary.DurationS <= 0 || res.Summary.DurationS >= 4 {
			t.Errorf("measured %.2f s: the stop should come in the measured time, before the fault", res.Summary.DurationS)
		}
		if fo.FaultAtS != 0 || fo.DowntimeS != 0 || fo.Problem != "the measured time ended before the fault was due (4s into it)" {
			t.Errorf("failover %+v: want none", *fo)
		}
		at := failoverSamples(run)
		if _, ok := at[metrics.FailoverFault]; ok {
			t.Errorf("a fault sample at %s, after the measured time ended at %s", at[metrics.FailoverFault], res.Summary.End)
		}
		if _, ok := at[metrics.FailoverArmed]; !ok {
			t.Error("no armed sample")
		}
		var b strings.Builder
		report.SummaryText(&b, &res.Summary)
		if want := "did not happen: the measured time ended before the fault was due (4s into it)"; !strings.Contains(b.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestFailoverSweep: in a sweep the fault comes when the steps have
// measured After between them (3 s steps after 0.5 s warm-ups, After
// 4 s: 1 s into the second step's measured time), never between steps.
func TestFailoverSweep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, run := failoverRun(t, ctx, nil, func(s *Spec) {
		s.Duration, s.Steps, s.Failover.After = 3*time.Second, []Step{{Clients: 1}, {Clients: 2}}, 4*time.Second
	})
	fo := res.Summary.Failover
	if fo == nil || fo.Problem != "" || len(res.Summary.Steps) != 2 {
		t.Fatalf("failover %+v, %d steps", fo, len(res.Summary.Steps))
	}
	t.Logf("failover: %+v", *fo)
	if fo.FaultAtS < 4 || fo.FaultAtS > 4+faultSlack {
		t.Errorf("fault %.3f s into the measured time, want 4 s", fo.FaultAtS)
	}
	// A step's start is its warm-up's.
	second := res.Summary.Steps[1].Start.Add(500 * time.Millisecond)
	if d := failoverSamples(run)[metrics.FailoverFault].Sub(second).Seconds(); d < 1 || d > 1+faultSlack {
		t.Errorf("fault %.3f s into the second step's measured time, want 1 s", d)
	}
}

// interruptAt cancels the run (as Ctrl-C does) once its measured
// intervals (warm-up excluded) cover after.
type interruptAt struct {
	cancel   context.CancelFunc
	after    time.Duration
	measured time.Duration
}

func (c *interruptAt) Write(r Record) error {
	if iv := r.Interval; iv != nil && !iv.Warmup {
		if c.measured += iv.Duration(); c.measured >= c.after {
			c.cancel()
		}
	}
	return nil
}

// TestFailoverAsync: an asynchronous standby takes over; the clients
// follow it; what the ledger lost, if anything, is counted.
func TestFailoverAsync(t *testing.T) {
	fo, run := runFailover(t, nil)
	if fo.Replication != "async" {
		t.Errorf("replication %q, want async", fo.Replication)
	}
	failoverTimeline(t, fo, run)
}

// failoverTimeline: the failover's events were recorded as they happened
// (samples, which a live page shows), in order and where the summary puts
// them; the HTML report has the failover section (events, legend) and
// the events as lines over the charts.
func failoverTimeline(t *testing.T, fo *metrics.Failover, run *store.Run) {
	t.Helper()
	at := failoverSamples(run)
	fault, promoted, first := at[metrics.FailoverFault], at[metrics.FailoverPromoted], at[metrics.FailoverFirstCommit]
	if _, ok := at[metrics.FailoverArmed]; !ok || fault.IsZero() || promoted.Before(fault) || first.Before(fault) {
		t.Fatalf("failover samples: %v", at)
	}
	if d := first.Sub(fault).Seconds(); math.Abs(d-fo.DowntimeS) > 0.001 {
		t.Errorf("first commit %.3f s after the fault in the samples, downtime %.3f s in the summary", d, fo.DowntimeS)
	}
	var b strings.Builder
	if err := report.HTML(&b, []*store.Run{run}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<section id="failover">`, "fault: pgarena stopped the primary", "promotion: the standby left recovery",
		"first commit on the new primary (the downtime ends)", "at least 90% of the median tps of the measured intervals before the fault",
		`"name":"fault"`, `"name":"promoted"`, `"name":"first commit"`, fmt.Sprintf("downtime %.3f s", fo.DowntimeS)} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if fo.RecoveredS > 0 && !strings.Contains(html, `"name":"recovered"`) {
		t.Errorf("recovered %.2f s after the fault, and no line for it", fo.RecoveredS)
	}
}

// TestFailoverSync: with a synchronous standby (synchronous_commit on),
// no acknowledged commit is lost.
func TestFailoverSync(t *testing.T) {
	fo, _ := runFailover(t, map[string]string{"synchronous_commit": "on", "synchronous_standby_names": "pgarena_streaming"})
	if fo.Replication != "sync" {
		t.Errorf("replication %q, want sync", fo.Replication)
	}
	if fo.AckedLost != 0 {
		t.Errorf("%d acknowledged commits lost with a synchronous standby", fo.AckedLost)
	}
}

// TestFailoverNamedPair: a primary and a standby the test runs, named as
// --dsn and --replica-dsn; the fault is a command (SIGQUIT to the
// postmaster: an immediate shutdown) and pgarena promotes the standby.
func TestFailoverNamedPair(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := os.Environ()
	bin, err := local.FindBinaries("", local.Env(env))
	if err != nil {
		t.Skip(err)
	}
	settings := map[string]string{"fsync": "off", "shared_buffers": "32MB"}
	primary, err := local.Start(ctx, local.Options{Env: env, BinDir: bin.Dir, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Remove()
	standby, err := local.Start(ctx, local.Options{Env: env, BinDir: bin.Dir, Settings: settings,
		BaseBackupFrom: primary.TCPDSN("postgres") + " application_name=teststandby"})
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Remove()
	pcfg, err := target.ParseDSN(primary.DSN("postgres"), nil)
	if err != nil {
		t.Fatal(err)
	}
	scfg, err := target.ParseDSN(standby.DSN("postgres"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := os.ReadFile(filepath.Join(primary.DataDir(), "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	p := &replica.DSN{Inner: &target.DSN{Config: pcfg}, Config: scfg}
	spec := Spec{
		Groups:   []Group{{Name: "tpcb", Workload: tpcbWorkload(t, tpcb.ScriptTPCBLike), Clients: 2, QueryMode: "prepared"}},
		Duration: 8 * time.Second, Tick: 250 * time.Millisecond, Seed: 1, Init: true, LoadWorkers: 2,
		Hooks: Hooks{Notef: t.Logf}, CatchUpTimeout: time.Minute, MaxErrorRate: 1,
		Failover: &Failover{After: 1500 * time.Millisecond, Timeout: time.Minute,
			Command: "kill -QUIT " + strings.SplitN(string(pid), "\n", 2)[0]},
	}
	res, err := Run(ctx, spec, p, st)
	if err != nil {
		t.Fatal(err)
	}
	fo := res.Summary.Failover
	if fo == nil || fo.Problem != "" || fo.Fault != "command" || fo.DowntimeS <= 0 || fo.LedgerAcked == 0 {
		t.Fatalf("failover %+v", fo)
	}
	t.Logf("failover: %+v", *fo)
}
