package serve

import (
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// TestReplicationAndFailoverFigures: a recorded run with replicas and a
// failover shows them in the runs list and on its page; while it ran, the
// page showed the failover's events as they were recorded.
func TestReplicationAndFailoverFigures(t *testing.T) {
	dir := t.TempDir()
	l := startLiveRun(t, dir, store.RunSpec{Label: "failover"})
	plain := startLiveRun(t, dir, store.RunSpec{Label: "plain"})
	for range 3 {
		l.tick(t)
		plain.tick(t)
	}
	plain.finish(t)
	ts := newTestServer(t, store.OpenReadOnly(dir), Options{})
	page := ts.URL + "/run/" + l.w.ID()
	_, body := get(t, page)
	if strings.Contains(body, `id="failover"`) {
		t.Error("a run without a failover has a failover section")
	}
	// armed, then the fault and the promotion, as the session records them
	sample := func(at time.Time, name string, v float64) {
		if err := l.w.AppendSamples(store.Sample{Time: at, Source: metrics.FailoverSource, Values: map[string]float64{name: v}}); err != nil {
			t.Fatal(err)
		}
	}
	sample(l.start, metrics.FailoverArmed, 4)
	_, body = get(t, page)
	mustContain(t, "live page, armed", body, `<section id="failover">`, "the fault is due 4.0 s into the run")
	sample(l.start.Add(4*time.Second), metrics.FailoverFault, 1)
	sample(l.start.Add(5500*time.Millisecond), metrics.FailoverPromoted, 1)
	l.tick(t)
	_, body = get(t, page)
	mustContain(t, "live page, promoted", body, "<td>4.00</td><td class=\"text\">fault: pgarena stopped the primary",
		"<td>5.50</td><td class=\"text\">promotion: the standby left recovery", `"name":"promoted"`)
	if strings.Contains(body, "the fault is due") {
		t.Error("the live page says the fault is due after it came")
	}
	for range 3 {
		l.tick(t)
	}
	sum := metrics.Summary{Status: metrics.StatusComplete, Workload: "tpcb", Clients: 4, Start: l.start, End: l.at,
		Replication: &metrics.Replication{CatchUpS: 1.25, CaughtUp: true, SustainableTPS: 42.5, SustainableRatio: 0.85,
			Replicas: []metrics.ReplicaLag{{Name: "streaming", Kind: "streaming", LagMaxS: 0.4, CatchUpS: 1.25, CaughtUp: true}}},
		Failover: &metrics.Failover{Fault: "immediate shutdown", Promotion: "pg_promote", Replication: "async",
			FaultAtS: 4, PromotedS: 1.5, DowntimeS: 1.625, RecoveredS: 3, LedgerAcked: 900, AckedLost: 3}}
	l.acc.Fill(&sum)
	if err := l.w.Finish(sum, &l.acc); err != nil {
		t.Fatal(err)
	}
	if err := l.w.Close(); err != nil {
		t.Fatal(err)
	}
	_, list := get(t, ts.URL+"/")
	mustContain(t, "list", list, "caught up in 1.25 s, sustainable 42.5 tps; failover: down 1.625 s, 3 of 900 acknowledged lost")
	if n := strings.Count(list, `class="muted repl"`); n != 1 {
		t.Errorf("list: %d runs with replication figures, want 1 (the plain run has none)", n)
	}
	_, body = get(t, page)
	mustContain(t, "run page", body, "sustainable throughput", ">42.5<", "replica catch-up", "caught up",
		`<section id="replication">`, "<td class=\"text\">streaming</td>", "failover downtime", ">1.625<", "acknowledged commits lost",
		"of 900 (ledger); standby async", "<td>5.62</td><td class=\"text\">first commit on the new primary",
		"<td>7.00</td><td class=\"text\">recovery:", `"name":"recovered"`)
}
