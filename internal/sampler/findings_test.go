package sampler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/store"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// batch makes one tick's samples: connections, commits, waits, host CPU
// and one disk.
func batch(sec int, conns, commits, active, lock, busy, util float64) []store.Sample {
	at := t0.Add(time.Duration(sec) * time.Second)
	return []store.Sample{
		{Time: at, Source: "pg_stat_database", Values: map[string]float64{"pg.xact_commit_per_s": commits}},
		{Time: at, Source: "activity", Values: map[string]float64{"pg.connections.total": conns, "pg.connections.max": 1000,
			"pg.active": active, "pg.wait_type.Lock": lock, "pg.wait.Lock:transactionid": lock, "pg.wait.CPU": active - lock}},
		{Time: at, Source: "host_cpu", Values: map[string]float64{"host.cpu.busy_pct": busy, "host.pgarena.cpu_pct": busy / 2}},
		{Time: at, Source: "host_disk", Values: map[string]float64{"host.disk.nvme0n1.util_pct": util}},
	}
}

func kinds(fs []store.Finding) map[string]store.Finding {
	m := map[string]store.Finding{}
	for _, f := range fs {
		m[f.Kind] = f
	}
	return m
}

func TestFindings(t *testing.T) {
	a := newAnalyzer(false)
	for s := range 30 {
		conns, commits := 950.0, 1000.0
		if s >= 10 {
			conns = 628 // a third of the clients lost, the rest go on
		}
		if s >= 20 {
			commits = 700
		}
		a.add(batch(s, conns, commits, 100, 60, 95, 97))
	}
	a.add([]store.Sample{noteSample(t0, "pg_stat_statements", "pg_stat_statements: not installed in this database, skipped", store.SeverityInfo)})
	srv := &totals{maxConns: 997, counts: map[string]float64{"deadlocks": 3, "checkpoints_req": 5, "xact_commit": 1000, "xact_rollback": 0}}
	logs := map[string]float64{"error": 12, "fatal": 3, "panic": 1, "too_many_clients": 12, "deadlock": 3}
	fs := a.findings(srv, logs)
	for _, f := range fs {
		t.Logf("%s %s: %s", f.Severity, f.Kind, f.Message)
	}
	got := kinds(fs)
	want := map[string]string{
		"connections_dropped":   "connections dropped from 950 to 628 at 12:00:10 UTC",
		"deadlocks":             "3 deadlocks",
		"checkpoints_requested": "checkpoints requested 5 (by WAL volume, a CHECKPOINT or a backup: max_wal_size too small?)",
		"client_bound":          "client host CPU busy over 90% in 30 of 30 samples",
		"io_bound":              "device nvme0n1 %util over 90% in 30 of 30 samples",
		"lock_bound":            "60% of active sessions were waiting on locks (top: Lock:transactionid)",
		"not_steady":            "last third is 30% lower",
		"server_log":            "server log: 12 'too many clients', 3 'deadlock', 1 PANIC",
		"sampler_note":          "pg_stat_statements: not installed",
	}
	for kind, text := range want {
		if f, ok := got[kind]; !ok || !strings.Contains(f.Message, text) {
			t.Errorf("finding %s: got %q, want it to contain %q", kind, f.Message, text)
		}
	}
	if fs[0].Severity != store.SeverityCritical || fs[0].Kind != "server_log" {
		t.Errorf("first finding %+v, want the critical PANIC", fs[0])
	}
}

// TestFindingsQuiet: a healthy run, and connections that close as the
// load ends, find nothing to warn about.
func TestFindingsQuiet(t *testing.T) {
	a := newAnalyzer(true)
	for s := range 20 {
		a.add(batch(s, 64, 5000, 20, 0, 40, 10))
	}
	a.add(batch(20, 1, 3000, 0, 0, 10, 0)) // the driver stopped: clients gone...
	a.add(batch(21, 1, 0, 0, 0, 5, 0))     // ...and commits with them
	for _, f := range a.findings(&totals{maxConns: 100, counts: map[string]float64{}}, map[string]float64{"error": 0}) {
		if f.Severity != store.SeverityInfo {
			t.Errorf("unexpected finding %s %s: %s", f.Severity, f.Kind, f.Message)
		}
	}
}

func TestLogScanner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	old := "2026-11-22 11:59:00.000 UTC [10] ERROR:  deadlock detected\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	l := newLogScanner(path)
	defer l.close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write(`2026-11-22 12:00:01.000 UTC [11] FATAL:  sorry, too many clients already
2026-11-22 12:00:01.100 UTC [12] ERROR:  deadlock detected
2026-11-22 12:00:01.100 UTC [12] DETAIL:  Process 12 waits for ShareLock on transaction 1; blocked by process 13.
2026-11-22 12:00:01.200 UTC [13] LOG:  checkpoint starting: wal
2026-11-22 12:00:01.300 UTC [14] ERROR:  duplicate key value violates unique constraint "t_pkey"
2026-11-22 12:00:01.400 UTC [15] PANIC:  could not write to file "pg_wal/xlogtemp.15": No space left on device
2026-11-22 12:00:01.500 UTC [16] FATAL:  terminating connection due to administrator command
2026-11-22 12:00:01.600 UTC [17] ERROR:  something else entirely
2026-11-22 12:00:01.700 UTC [18] ERROR:  deadlock det`) // a line still being written
	s1 := l.sample(t0)
	write("ected\n")
	s2 := l.sample(t0.Add(time.Second))
	if len(s1) != 1 || len(s2) != 1 {
		t.Fatalf("samples %+v %+v", s1, s2)
	}
	want1 := map[string]float64{"log.error": 3, "log.fatal": 2, "log.panic": 1, "log.too_many_clients": 1, "log.deadlock": 1,
		"log.constraint": 1, "log.could_not_write": 1, "log.terminating_connection": 1, "log.other": 1}
	for k, v := range want1 {
		if s1[0].Values[k] != v {
			t.Errorf("first sample %s = %v, want %v (%v)", k, s1[0].Values[k], v, s1[0].Values)
		}
	}
	if len(s1[0].Values) != len(want1) {
		t.Errorf("first sample has %d series, want %d: %v", len(s1[0].Values), len(want1), s1[0].Values)
	}
	if v := s2[0].Values; v["log.deadlock"] != 1 || v["log.error"] != 1 || v["log.too_many_clients"] != 0 {
		t.Errorf("second sample %v", v)
	}
	if l.totals["deadlock"] != 2 || l.totals["panic"] != 1 {
		t.Errorf("totals %v", l.totals)
	}

	missing := newLogScanner(filepath.Join(t.TempDir(), "nope.log"))
	if s := missing.sample(t0); len(s) != 1 || !strings.Contains(s[0].Note, "server_log: cannot read") {
		t.Errorf("missing log: %+v", s)
	}
	if s := missing.sample(t0); len(s) != 0 {
		t.Errorf("missing log noted twice: %+v", s)
	}
}

// TestFindingsHostSaturated: a busy host is client-bound only when
// pgarena used most of the CPU; when the server or a pooler shares the
// host, or pgarena used little of it, the finding says the host is
// saturated and how much pgarena used.
func TestFindingsHostSaturated(t *testing.T) {
	for _, tc := range []struct {
		dbLocal    bool
		own        float64
		kind, text string
	}{
		{true, 9, "host_saturated", "host CPU busy over 90% in 10 of 10 samples: host saturated, pgarena used 9%: client and server share this host"},
		{true, 80, "host_saturated", "host saturated, pgarena used 80%: client and server share this host"},
		{false, 9, "host_saturated", "client host CPU busy over 90% in 10 of 10 samples: host saturated, pgarena used 9%: other processes"},
		{false, 80, "client_bound", "client-bound, the numbers may understate the server (pgarena used 80% of it)"},
	} {
		a := newAnalyzer(tc.dbLocal)
		for s := range 10 {
			a.add([]store.Sample{{Time: t0.Add(time.Duration(s) * time.Second), Source: "host_cpu",
				Values: map[string]float64{"host.cpu.busy_pct": 96, "host.pgarena.cpu_pct": tc.own}}})
		}
		got := kinds(a.findings(nil, nil))
		if f, ok := got[tc.kind]; !ok || !strings.Contains(f.Message, tc.text) || len(got) != 1 {
			t.Errorf("dbLocal %v, pgarena %v%%: findings %v, want %s containing %q", tc.dbLocal, tc.own, got, tc.kind, tc.text)
		}
	}
	for host, want := range map[string]bool{"/var/run/postgresql": true, "localhost": true, "127.0.0.1": true, "::1": true,
		"db.example.com": false, "10.0.0.5": false} {
		if got := hostIsLocal(host); got != want {
			t.Errorf("hostIsLocal(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestCountersRestart: checkpoints across a server restart (its
// end-of-recovery checkpoint, counted as requested by the server) are not
// the run's; counting resumes from the first observation after it.
func TestCountersRestart(t *testing.T) {
	c := newCounters("checkpoints_req", startedKey)
	obs := func(sec int, started, req float64) bool {
		c.cur[0], c.cur[1] = req, started
		now := t0.Add(time.Duration(sec) * time.Second)
		if c.restarted(now, 1) {
			return true
		}
		c.update(now)
		return false
	}
	obs(0, 1000, 0)
	obs(1, 1000, 1)       // a requested checkpoint in the run
	if !obs(2, 2000, 1) { // a crash; statistics reset, then the end-of-recovery checkpoint
		t.Fatal("restart not seen")
	}
	if obs(3, 2000, 3) {
		t.Fatal("restart seen twice")
	}
	if got := c.total[0]; got != 3 {
		t.Fatalf("checkpoints_req total %v, want 3 (1 before the restart, 2 after)", got)
	}
}

func TestCounters(t *testing.T) {
	c := newCounters("a", "b")
	obs := func(sec int, a, b float64) (float64, bool) {
		c.cur[0], c.cur[1] = a, b
		return c.update(t0.Add(time.Duration(sec) * time.Second))
	}
	if _, ok := obs(0, 10, 5); ok {
		t.Fatal("first observation gave deltas")
	}
	secs, ok := obs(2, 30, 5)
	if !ok || secs != 2 || c.delta[0] != 20 || c.delta[1] != 0 || !c.has(1) {
		t.Fatalf("deltas %v secs %v ok %v", c.delta, secs, ok)
	}
	obs(3, 4, 6) // a was reset
	if c.has(0) || c.get(0) != 0 || c.delta[1] != 1 {
		t.Fatalf("after reset %v", c.delta)
	}
	obs(4, 10, 6)
	if c.delta[0] != 6 || c.total[0] != 26 || c.total[1] != 1 {
		t.Fatalf("deltas %v totals %v", c.delta, c.total)
	}
	if !c.counted[0] || !c.counted[1] {
		t.Fatalf("counted %v", c.counted)
	}
}

func TestSeriesWord(t *testing.T) {
	for in, want := range map[string]string{
		"idle in transaction (aborted)": "idle_in_transaction_aborted",
		"active":                        "active",
		"":                              "unnamed",
		"walreceiver 10.0.0.2":          "walreceiver_10_0_0_2",
		"127.0.0.1:34815":               "127_0_0_1_34815",
	} {
		if got := seriesWord(in); got != want {
			t.Errorf("seriesWord(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSteadinessPerStep: a sweep whose steps are each steady is not "not
// steady" once the steps are marked (unmarked, its rise reads as drift);
// a step that drifts is named.
func TestSteadinessPerStep(t *testing.T) {
	rates := []float64{300, 600, 1200}
	feed := func(a *analyzer, drift int) {
		for step, r := range rates {
			for i := range 10 {
				v := r
				if step+1 == drift && i >= 5 {
					v = r * 0.6
				}
				a.add(batch(step*10+i, 8, v, 4, 0, 20, 10))
			}
		}
	}
	mark := func(a *analyzer) {
		s := &Sampler{an: a}
		for step := range rates {
			s.MarkStep(t0.Add(time.Duration(step*10) * time.Second))
		}
		a.stepStarts = s.marks // what Stop hands over
	}

	a := newAnalyzer(false)
	feed(a, 0)
	if f, ok := kinds(a.findings(nil, nil))["not_steady"]; !ok {
		t.Errorf("unmarked sweep: want the whole-run view to call the ramp not steady")
	} else {
		t.Logf("unmarked: %s", f.Message)
	}

	a = newAnalyzer(false)
	feed(a, 0)
	mark(a)
	if f, ok := kinds(a.findings(nil, nil))["not_steady"]; ok {
		t.Errorf("steady steps: unexpected finding %q", f.Message)
	}

	a = newAnalyzer(false)
	feed(a, 2)
	mark(a)
	f, ok := kinds(a.findings(nil, nil))["not_steady"]
	if !ok || !strings.HasPrefix(f.Message, "step 2: not steady") || !strings.Contains(f.Message, "40% lower") {
		t.Errorf("drifting step 2: got %q (found %v)", f.Message, ok)
	}
}

// TestSteadinessWithinWindows: a ramp (or a warm-up) raises the commit
// rate on purpose; with the windows of constant load marked, only they are
// judged: a flat window is steady, a window that drifts is named, and no
// window (a rising schedule) judges nothing.
func TestSteadinessWithinWindows(t *testing.T) {
	feed := func(a *analyzer, drift bool) {
		for i := range 20 {
			v := 100.0
			if i < 6 {
				v = 10 + 15*float64(i) // the ramp
			} else if drift && i >= 14 {
				v = 70
			}
			a.add(batch(i, 8, v, 4, 0, 20, 10))
		}
	}
	after := Window{From: t0.Add(6 * time.Second), To: t0.Add(19 * time.Second)}
	judge := func(drift bool, ws ...Window) (store.Finding, bool) {
		a := newAnalyzer(false)
		feed(a, drift)
		s := &Sampler{an: a}
		s.MarkSteady(ws...)
		a.steady, a.steadySet = s.steady, s.steadySet // what Stop hands over
		f, ok := kinds(a.findings(nil, nil))["not_steady"]
		return f, ok
	}
	a := newAnalyzer(false)
	feed(a, false)
	if _, ok := kinds(a.findings(nil, nil))["not_steady"]; !ok {
		t.Errorf("unmarked: want the whole-run view to call the ramp not steady")
	}
	if f, ok := judge(false, after); ok {
		t.Errorf("steady after the ramp: unexpected %q", f.Message)
	}
	if f, ok := judge(true, Window{Label: "step 1: ", From: after.From, To: after.To}); !ok || !strings.HasPrefix(f.Message, "step 1: not steady") {
		t.Errorf("drift after the ramp: got %q (found %v)", f.Message, ok)
	}
	if f, ok := judge(false); ok {
		t.Errorf("no window of constant load: unexpected %q", f.Message)
	}
}
