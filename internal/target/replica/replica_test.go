package replica_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/target/replica"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// provision starts an embedded primary with a replica of kind, in a
// temporary directory of the test (checked empty after teardown).
func provision(t *testing.T, ctx context.Context, kind string) (*target.Target, func()) {
	t.Helper()
	// As root the server runs as postgres: the directory must be reachable.
	tmp, err := os.MkdirTemp("", "replicatest-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o755)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	env := local.Env(append(os.Environ(), "TMPDIR="+tmp))
	bin, err := local.FindBinaries("", env)
	if err != nil {
		if pgtest.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	p := &replica.Provider{Kind: kind, Env: env, Notef: t.Logf,
		Inner: &local.Ephemeral{Bin: bin, Env: env, Settings: map[string]string{"fsync": "off", "shared_buffers": "32MB", "max_connections": "20"}}}
	tgt, teardown, err := p.Provision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tgt, func() {
		teardown()
		left, _ := os.ReadDir(tmp)
		if len(left) > 0 {
			t.Errorf("teardown left %d entries in %s (%s...)", len(left), tmp, left[0].Name())
		}
	}
}

func exec(t *testing.T, ctx context.Context, cfg *pgx.ConnConfig, sql string) {
	t.Helper()
	conn, err := target.Connect(ctx, cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// writeFor updates the primary for d.
func writeFor(t *testing.T, ctx context.Context, cfg *pgx.ConnConfig, d time.Duration) int {
	conn, err := target.Connect(ctx, cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); n++ {
		if _, err := conn.Exec(ctx, `update t set v = v + 1 where id = $1`, n%10); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// testLagAndCatchUp: with the replica held (pause, resume), the heartbeat
// shows lag under writes, the catch-up takes about as long as it was held
// after the load, and the lag is about zero afterwards.
func testLagAndCatchUp(t *testing.T, kind string, hold func(*testing.T, context.Context, *pgx.ConnConfig) (release func())) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tgt, teardown := provision(t, ctx, kind)
	defer teardown()
	if len(tgt.Replicas) != 1 || tgt.Replicas[0].Kind != kind {
		t.Fatalf("replicas: %+v", tgt.Replicas)
	}
	rep := tgt.Replicas[0]
	exec(t, ctx, tgt.Config, `create table t (id int primary key, v int); insert into t select g, 0 from generate_series(0, 9) g`)
	hb, err := replica.NewHeartbeat(ctx, tgt.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close()
	if rep.Attach != nil {
		if err := rep.Attach(ctx, []string{"t", replica.HeartbeatTable}); err != nil {
			t.Fatal(err)
		}
	}
	mon := replica.StartMonitor(ctx, hb, tgt.Replicas, replica.MonitorOptions{Notef: t.Logf})
	defer mon.Stop()
	if took, ok, err := mon.CatchUp(ctx, 30*time.Second); err != nil || !ok[0] {
		t.Fatalf("initial catch-up: %v %v %v", took, ok, err)
	}

	release := hold(t, ctx, rep.Config)
	from := time.Now()
	n := writeFor(t, ctx, tgt.Config, time.Second)
	end := time.Now()
	const held = 1500 * time.Millisecond
	go func() {
		time.Sleep(held)
		release()
	}()
	took, ok, err := mon.CatchUp(ctx, 30*time.Second)
	if err != nil || !ok[0] {
		t.Fatalf("catch-up: %v %v %v", took, ok, err)
	}
	st := mon.Stats(from, end)[0]
	t.Logf("%s: %d updates in 1s, lag max %.2fs p99 %.2fs at end %.2fs, catch-up %s", kind, n, st.Max, st.P99, st.AtEnd, took[0])
	if st.Max < 0.5 || st.AtEnd < 0.5 {
		t.Errorf("lag while held: max %.2fs, at end %.2fs; want about 1s", st.Max, st.AtEnd)
	}
	if took[0] < held-200*time.Millisecond || took[0] > held+2*time.Second {
		t.Errorf("catch-up took %s; the replica was held %s after the load", took[0], held)
	}
	// The lag read over 300 ms that start after the catch-up.
	caughtUp := time.Now()
	var after replica.LagStats
	for deadline := caughtUp.Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		now := time.Now()
		if from := now.Add(-300 * time.Millisecond); from.After(caughtUp) {
			if after = mon.Stats(from, now)[0]; after.Reads > 0 {
				break
			}
		}
		if now.After(deadline) {
			t.Fatal("no lag read within 10 s after the catch-up")
		}
	}
	if after.Max > 0.3 {
		t.Errorf("lag after catch-up: %.2fs, want about 0", after.Max)
	}
	var primary, copy int
	conn, err := target.Connect(ctx, rep.Config, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `select sum(v) from t`).Scan(&copy); err != nil {
		t.Fatal(err)
	}
	pconn, err := target.Connect(ctx, tgt.Config, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer pconn.Close(ctx)
	if err := pconn.QueryRow(ctx, `select sum(v) from t`).Scan(&primary); err != nil {
		t.Fatal(err)
	}
	if primary != n || copy != n {
		t.Errorf("sum(v): primary %d, replica %d, want %d", primary, copy, n)
	}
}

// bySQL holds a replica with one statement and releases it with another.
func bySQL(hold, release string) func(*testing.T, context.Context, *pgx.ConnConfig) func() {
	return func(t *testing.T, ctx context.Context, cfg *pgx.ConnConfig) func() {
		exec(t, ctx, cfg, hold)
		return func() { exec(t, ctx, cfg, release) }
	}
}

// byLock holds a subscriber's apply worker with a lock on the table it
// applies to (disabling a subscription would add the launcher's restart
// delay, wal_retrieve_retry_interval, to the catch-up).
func byLock(t *testing.T, ctx context.Context, cfg *pgx.ConnConfig) func() {
	conn, err := target.Connect(ctx, cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "begin; lock table t in access exclusive mode"); err != nil {
		t.Fatal(err)
	}
	return func() { conn.Exec(ctx, "commit"); conn.Close(ctx) }
}

func TestStreaming(t *testing.T) {
	testLagAndCatchUp(t, "streaming", bySQL("select pg_wal_replay_pause()", "select pg_wal_replay_resume()"))
}

func TestLogical(t *testing.T) { testLagAndCatchUp(t, "logical", byLock) }

func TestPglogical(t *testing.T) { testLagAndCatchUp(t, "pglogical", byLock) }
