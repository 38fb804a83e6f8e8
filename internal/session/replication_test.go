package session

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/replica"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
)

// checkReplication checks a summary's replication part: every replica
// caught up, the lag was measured, and the sustainable rate is the formula.
func checkReplication(t *testing.T, what string, r *metrics.Replication, tx int64, durS, tps float64) {
	t.Helper()
	if r == nil || len(r.Replicas) != 1 {
		t.Fatalf("%s: replication %+v: want one replica", what, r)
	}
	if !r.CaughtUp || r.CatchUpS < 0 || r.CatchUpS > 10 {
		t.Errorf("%s: caught up %v in %.2fs", what, r.CaughtUp, r.CatchUpS)
	}
	want := float64(tx) / (durS + r.CatchUpS)
	if math.Abs(r.SustainableTPS-want) > 1e-9*want || math.Abs(r.SustainableRatio-want/tps) > 1e-9 {
		t.Errorf("%s: sustainable %.3f (ratio %.4f), want %d/(%.3f+%.3f) = %.3f", what, r.SustainableTPS, r.SustainableRatio, tx, durS, r.CatchUpS, want)
	}
}

// TestStreamingReplicaSweep: an embedded primary with a streaming standby,
// a two-step sweep: each step and the run have their catch-up and
// sustainable rate, and the lag series is on the timeline.
func TestStreamingReplicaSweep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := local.Env(os.Environ())
	bin, err := local.FindBinaries("", env)
	if err != nil {
		t.Skip(err)
	}
	p := &replica.Provider{Kind: "streaming", Env: env, Notef: t.Logf,
		Inner: &local.Ephemeral{Bin: bin, Env: env, Settings: map[string]string{"fsync": "off", "shared_buffers": "32MB"}}}
	w := tpcbWorkload(t, tpcb.ScriptTPCBLike)
	spec := Spec{
		Groups:   []Group{{Name: "tpcb", Workload: w, Clients: 1, QueryMode: "prepared"}},
		Steps:    []Step{{Clients: 1}, {Clients: 2}},
		Duration: time.Second, Tick: 250 * time.Millisecond, SampleEvery: 250 * time.Millisecond,
		Seed: 1, Init: true, LoadWorkers: 2,
		Hooks: Hooks{Notef: t.Logf},
		// within the test's budget: a standby that cannot follow fails
		// the run with its servers' words, not the context's deadline
		CatchUpTimeout: time.Minute,
	}
	res, err := Run(ctx, spec, p, st)
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	if sum.Status != metrics.StatusComplete || len(sum.Steps) != 2 {
		t.Fatalf("status %s, %d steps", sum.Status, len(sum.Steps))
	}
	for _, s := range sum.Steps {
		checkReplication(t, "step", s.Replication, s.Transactions, s.DurationS, s.TPS)
	}
	checkReplication(t, "run", sum.Replication, sum.Transactions, sum.DurationS, sum.TPS)
	if c := sum.Replication.CatchUpS; math.Abs(c-(sum.Steps[0].Replication.CatchUpS+sum.Steps[1].Replication.CatchUpS)) > 1e-9 {
		t.Errorf("run catch-up %.3f is not the steps' sum", c)
	}
	run, err := st.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary.Replication == nil {
		t.Error("the stored summary has no replication part")
	}
	if pts := run.Series("pg.replica.streaming.lag_s"); len(pts) < 4 {
		t.Errorf("%d lag samples stored, want one per 250 ms", len(pts))
	}
}

// TestReplicaDSN: a standby the test starts, named as --replica-dsn: lag
// and catch-up are measured through the heartbeat.
func TestReplicaDSN(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dsn := pgtest.DSN(t)
	primary, err := target.ParseDSN(dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := pgtest.Cluster(t)
	settings := c.Settings()
	delete(settings, "port")
	delete(settings, "unix_socket_directories")
	standby, err := local.Start(ctx, local.Options{Env: os.Environ(), BinDir: c.Binaries().Dir, Settings: settings,
		BaseBackupFrom: c.TCPDSN(primary.Database) + " application_name=teststandby"})
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Remove()
	rcfg, err := target.ParseDSN(standby.DSN(primary.Database), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &replica.DSN{Inner: &target.DSN{Config: primary}, Config: rcfg}
	spec := Spec{
		Groups:   []Group{{Name: "tpcb", Workload: tpcbWorkload(t, tpcb.ScriptTPCBLike), Clients: 2, QueryMode: "prepared"}},
		Duration: time.Second, Tick: 250 * time.Millisecond, SampleEvery: 250 * time.Millisecond,
		Seed: 1, Init: true, LoadWorkers: 2, Hooks: Hooks{Notef: t.Logf},
	}
	res, err := Run(ctx, spec, p, st)
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	checkReplication(t, "run", sum.Replication, sum.Transactions, sum.DurationS, sum.TPS)
	if sum.Replication.Replicas[0].Kind != "dsn" {
		t.Errorf("replica kind %q", sum.Replication.Replicas[0].Kind)
	}
}
