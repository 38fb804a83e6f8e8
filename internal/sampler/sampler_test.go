package sampler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/waittest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// collector is a Sink that keeps every batch.
type collector struct {
	mu      sync.Mutex
	samples []store.Sample
}

func (c *collector) sink(b []store.Sample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.samples = append(c.samples, b...)
}

func (c *collector) run() *store.Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &store.Run{Samples: append([]store.Sample(nil), c.samples...)}
}

func maxOf(pts []store.Point) float64 {
	m := 0.0
	for _, p := range pts {
		m = max(m, p.Value)
	}
	return m
}

func parseConfig(t *testing.T, dsn string) *pgx.ConnConfig {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func hasFinding(fs []store.Finding, kind, text string) bool {
	for _, f := range fs {
		if f.Kind == kind && strings.Contains(f.Message, text) {
			return true
		}
	}
	return false
}

// TestUnderLoad samples a database while a few goroutines commit in a
// loop: commit rates, connections and host series must show it, and Stop
// must return promptly and leave no connection behind.
func TestUnderLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := pgtest.DSN(t)
	cluster := pgtest.Cluster(t)
	setup, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close(ctx)
	if _, err := setup.Exec(ctx, "create table t (id int primary key, n int)"); err != nil {
		t.Fatal(err)
	}

	var c collector
	s, err := Start(ctx, Options{
		ConnConfig:    parseConfig(t, dsn),
		Interval:      200 * time.Millisecond,
		DBHostLocal:   true,
		DataDir:       cluster.DataDir(),
		ServerLogPath: cluster.LogPath(),
		Sink:          c.sink,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	const clients = 4
	var committed atomic.Int64
	var wg sync.WaitGroup
	loadCtx, stopLoad := context.WithTimeout(ctx, 2500*time.Millisecond)
	defer stopLoad()
	var peak atomic.Int64 // connections seen by the sampler while all clients were connected
	ready := make(chan struct{}, clients)
	for i := range clients {
		wg.Go(func() {
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Error(err)
				ready <- struct{}{}
				return
			}
			defer conn.Close(context.Background())
			ready <- struct{}{}
			for j := 0; loadCtx.Err() == nil; j++ {
				_, err := conn.Exec(loadCtx, "insert into t values ($1, $2) on conflict (id) do update set n = t.n + 1", i*1000+j%1000, j)
				if err != nil {
					if loadCtx.Err() == nil {
						t.Error(err)
					}
					return
				}
				committed.Add(1)
			}
		})
	}
	for range clients {
		<-ready
	}
	// Until the samples show every client connected (10 s at most).
	for deadline := time.Now().Add(10 * time.Second); maxOf(c.run().Series("pg.connections.total")) < clients; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			break
		}
	}
	peak.Store(int64(maxOf(c.run().Series("pg.connections.total"))))
	wg.Wait()
	time.Sleep(600 * time.Millisecond) // closed connections flush their statistics

	t0 := time.Now()
	findings := s.Stop()
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Stop took %s", d)
	}
	r := c.run()
	t.Logf("%d samples, series %v", len(r.Samples), r.SeriesNames())
	for _, f := range findings {
		t.Logf("finding %s %s: %s", f.Severity, f.Kind, f.Message)
	}

	if m := maxOf(r.Series("pg.xact_commit_per_s")); m <= 0 {
		t.Errorf("max commit rate %v, want > 0", m)
	}
	if m := maxOf(r.Series("pg.tup_inserted_per_s")) + maxOf(r.Series("pg.tup_updated_per_s")); m <= 0 {
		t.Errorf("no inserts or updates seen")
	}
	// The server's count of commits covers the load (plus the sampler's own
	// queries, a few per tick).
	total := s.srv.totals().counts["xact_commit"]
	if n := float64(committed.Load()); total < 0.9*n || total > 1.1*n+500 {
		t.Errorf("server counted %.0f commits, the clients %.0f", total, n)
	}
	if p := peak.Load(); p < clients {
		t.Errorf("peak connections %d, want at least %d", p, clients)
	}
	want := []string{"host.cpu.user_pct", "host.cpu.sys_pct", "host.cpu.busy_pct", "host.load1",
		"host.pgarena.cpu_pct", "host.mem.used_bytes", "pg.wal_bytes_per_s", "pg.locks.total", "pg.connections.max",
		"pg.checkpoints_req", "pg.checkpoints_timed", "pg.buffers_checkpoint_per_s", "pg.buffers_clean_per_s",
		"pg.buffers_backend_per_s", "pg.cache_hit_pct", "log.error"}
	if cluster.Binaries().Major >= 14 {
		want = append(want, "pg.wal_fpi_per_s", "pg.wal_buffers_full") // pg_stat_wal
	}
	for _, name := range want {
		if len(r.Series(name)) == 0 {
			t.Errorf("no series %s", name)
		}
	}
	if m := maxOf(r.Series("host.pgarena.cpu_pct")); m <= 0 {
		t.Errorf("pgarena's own CPU never above 0")
	}
	if m := maxOf(r.Series("pg.wal_bytes_per_s")); m <= 0 {
		t.Errorf("no WAL written")
	}
	for _, smp := range r.Samples {
		if smp.Source == "host_disk" {
			t.Logf("host_disk labels %v", smp.Labels)
		}
		if smp.Source == "host_cpu" && smp.Labels["db_host"] != "true" {
			t.Errorf("host sample not labelled as the db host: %+v", smp)
			break
		}
	}
	const note = "pg_stat_statements: not installed in this database, skipped"
	if !hasFinding(findings, "sampler_note", note) || !containsString(r.Notes(), note) {
		t.Errorf("no note %q in %q", note, r.Notes())
	}

	// Stop leaves no sampler connection behind.
	deadline := time.Now().Add(3 * time.Second)
	for {
		var n int
		if err := setup.QueryRow(ctx, "select count(*) from pg_stat_activity where application_name = $1", AppName).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sampler connections left after Stop", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if again := s.Stop(); len(again) != len(findings) {
		t.Errorf("second Stop returned %d findings, first %d", len(again), len(findings))
	}
}

// TestDeadlock forces a deadlock: it shows in the deadlock counter, the
// server log counter and the findings.
func TestDeadlock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := pgtest.DSN(t)
	var c collector
	s, err := Start(ctx, Options{ConnConfig: parseConfig(t, dsn), Interval: 100 * time.Millisecond,
		ServerLogPath: pgtest.Cluster(t).LogPath(), Sink: c.sink})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	a, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"create table d (id int primary key, n int)", "insert into d values (1, 0), (2, 0)",
		"set deadlock_timeout = '100ms'"} {
		if _, err := a.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	mustExec := func(conn *pgx.Conn, q string) {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(a, "begin")
	mustExec(b, "begin")
	mustExec(a, "update d set n = 1 where id = 1")
	mustExec(b, "update d set n = 1 where id = 2")
	errs := make(chan error, 2)
	go func() { _, err := a.Exec(ctx, "update d set n = 2 where id = 2"); errs <- err }()
	waitLocked(t, ctx, dsn, a.PgConn().PID())
	go func() { _, err := b.Exec(ctx, "update d set n = 2 where id = 1"); errs <- err }()
	var deadlocks int
	for range 2 {
		err := <-errs
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "40P01" {
			deadlocks++
		}
	}
	if deadlocks != 1 {
		t.Fatalf("%d deadlocks, want 1", deadlocks)
	}
	a.Close(ctx) // closing flushes each backend's statistics
	b.Close(ctx)
	sum := func(name string) float64 {
		n := 0.0
		for _, p := range c.run().Series(name) {
			n += p.Value
		}
		return n
	}
	// Until the samples show the deadlock in both places (10 s at most).
	for deadline := time.Now().Add(10 * time.Second); sum("pg.deadlocks") < 1 || sum("log.deadlock") < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			break
		}
	}
	findings := s.Stop()
	if n := sum("pg.deadlocks"); n != 1 {
		t.Errorf("pg.deadlocks summed to %v, want 1", n)
	}
	if n := sum("log.deadlock"); n != 1 {
		t.Errorf("log.deadlock summed to %v, want 1", n)
	}
	if !hasFinding(findings, "deadlocks", "1 deadlock") || !hasFinding(findings, "server_log", "1 'deadlock'") {
		t.Errorf("findings %+v", findings)
	}
}

// waitLocked waits (10 s at most) until backend pid waits for a lock.
func waitLocked(t *testing.T, ctx context.Context, dsn string, pid uint32) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := conn.QueryRow(ctx, "select count(*) from pg_stat_activity where pid = $1 and wait_event_type = 'Lock'", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d not waiting for a lock within 10 s", pid)
		}
	}
}

// TestStatements samples pg_stat_statements on a cluster that preloads it.
func TestStatements(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := pgtest.NewCluster(t, map[string]string{"shared_preload_libraries": "pg_stat_statements"})
	dsn := cl.DSN("postgres")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "create extension if not exists pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	var c collector
	s, err := Start(ctx, Options{ConnConfig: parseConfig(t, dsn), Interval: 200 * time.Millisecond, TopN: 3, Sink: c.sink})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		if _, err := conn.Exec(ctx, "select pg_sleep(0.01), 'pgarena-test-statement'"); err != nil {
			t.Fatal(err)
		}
	}
	s.Stop()
	r := c.run()
	var found bool
	for _, smp := range r.Samples {
		if smp.Source != "pg_stat_statements" {
			continue
		}
		for k, text := range smp.Labels {
			if strings.Contains(text, "pg_sleep") && smp.Values[k+".time_ms_per_s"] > 0 && smp.Values[k+".calls_per_s"] > 0 {
				found = true
			}
		}
		if n := strings.Count(strings.Join(keys(smp.Values), " "), ".time_ms_per_s"); n > 3+2 {
			t.Errorf("%d statement series in one sample, want at most TopN+other+total", n)
		}
	}
	if !found {
		t.Errorf("the test statement is not among the top statements: notes %q", r.Notes())
	}
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestUnreachable: a server that accepts connections and never answers
// makes Start fail within its deadline instead of hanging.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	cfg := parseConfig(t, "postgres://u@"+ln.Addr().String()+"/db?sslmode=disable&connect_timeout=1")
	t0 := time.Now()
	_, err = Start(context.Background(), Options{ConnConfig: cfg, Interval: 100 * time.Millisecond})
	if err == nil {
		t.Fatal("Start succeeded against a silent server")
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Start took %s to give up", d)
	}
}

// TestHostOnly: without a server the host is still sampled.
func TestHostOnly(t *testing.T) {
	var c collector
	s, err := Start(context.Background(), Options{Interval: 50 * time.Millisecond, Sink: c.sink})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	s.Stop()
	r := c.run()
	if len(r.Series("host.cpu.idle_pct")) == 0 || len(r.Series("host.mem.available_bytes")) == 0 {
		t.Errorf("no host series: %v (notes %q)", r.SeriesNames(), r.Notes())
	}
	for _, smp := range r.Samples {
		if strings.HasPrefix(smp.Source, "pg") {
			t.Errorf("server sample without a server: %+v", smp)
		}
		if smp.Labels["db_host"] != "" {
			t.Errorf("host sample labelled db_host without DBHostLocal")
		}
	}
}

// TestStuckServer freezes the sampler's server process (SIGSTOP): its
// queries time out, the loss is noted, the sampler reconnects and goes on,
// and Stop returns promptly.
func TestStuckServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := pgtest.DSN(t)
	var c collector
	s, err := Start(ctx, Options{ConnConfig: parseConfig(t, dsn), Interval: 100 * time.Millisecond, QueryTimeout: 300 * time.Millisecond, Sink: c.sink})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var pid int
	if err := conn.QueryRow(ctx, "select pid from pg_stat_activity where application_name = $1", AppName).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Skipf("cannot stop the server process %d: %v", pid, err)
	}
	frozen := time.Now()
	defer syscall.Kill(pid, syscall.SIGCONT)
	time.Sleep(3 * time.Second)
	_ = syscall.Kill(pid, syscall.SIGCONT) // let it see its closed socket and exit
	// The sampler reconnects while the old backend is stuck, within a few
	// ticks; on a busy machine connecting may take longer: wait for the
	// first sample after it, at most 10 s.
	sampledAfter := func() int {
		n := 0
		for _, p := range c.run().Series("pg.connections.total") {
			if p.Time.After(frozen.Add(2 * time.Second)) {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); sampledAfter() == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}

	t0 := time.Now()
	s.Stop()
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("Stop took %s", d)
	}
	r := c.run()
	t.Logf("notes %q", r.Notes())
	lost := false
	for _, n := range r.Notes() {
		lost = lost || strings.Contains(n, "connection lost")
	}
	if !lost {
		t.Errorf("no connection-lost note in %q", r.Notes())
	}
	if sampledAfter() == 0 {
		t.Errorf("no server samples after the sampler reconnected (notes %q)", r.Notes())
	}
}

// TestIntoRun wires the sampler to a run directory as the run command
// does: samples appended as they come, findings at the end, both loaded
// back.
func TestIntoRun(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.Create(store.RunSpec{Workload: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	var appendErr error
	s, err := Start(context.Background(), Options{ConnConfig: parseConfig(t, pgtest.DSN(t)), Interval: 100 * time.Millisecond,
		Sink: func(b []store.Sample) {
			if err := run.AppendSamples(b...); err != nil && appendErr == nil {
				appendErr = err
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	t1 := time.Now()
	fs := s.Stop()
	t.Logf("Stop took %s", time.Since(t1))
	if err := run.SetFindings(fs); err != nil {
		t.Fatal(err)
	}
	if appendErr != nil {
		t.Fatal(appendErr)
	}
	r, err := st.Load(run.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Series("pg.connections.total")) == 0 || len(r.Series("host.cpu.busy_pct")) == 0 || len(r.Findings) == 0 {
		t.Errorf("loaded %d samples, series %v, findings %+v", len(r.Samples), r.SeriesNames(), r.Findings)
	}
}

// TestServerSourcesOneRoundTrip: the server sources' queries go to the
// server in one message (the sampler's backend shows them all as its last
// query); a source that fails there (pg_stat_statements created but not
// preloaded) is turned off alone, and the others report in that tick and
// the next ones.
func TestServerSourcesOneRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := pgtest.DSN(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "create extension if not exists pg_stat_statements"); err != nil {
		t.Skip(err)
	}
	var c collector
	s, err := Start(ctx, Options{ConnConfig: parseConfig(t, dsn), Interval: 50 * time.Millisecond, Sink: c.sink})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	// the first two sources: the text shown is cut at 1 kB
	waittest.Until(t, "the sampler's last query to be a batch of its sources", 10*time.Second, func() (bool, string) {
		var query string
		err := conn.QueryRow(ctx, "select query from pg_stat_activity where application_name = $1", AppName).Scan(&query)
		done := err == nil && strings.Contains(query, "from pg_stat_database") && strings.Contains(query, "from pg_stat_activity") &&
			len(c.run().Series("pg.locks.total")) >= 2
		return done, fmt.Sprintf("%q (%v)", query, err)
	})
	s.Stop()
	r := c.run()
	first := r.Samples[0].Time
	var locksFirst, locksLater, skipped bool
	for _, smp := range r.Samples {
		switch {
		case smp.Source == "locks":
			locksFirst = locksFirst || smp.Time.Equal(first)
			locksLater = locksLater || smp.Time.After(first)
		case smp.Source == "pg_stat_statements" && strings.Contains(smp.Note, "skipped"):
			skipped = true
		}
	}
	if !locksFirst || !locksLater || !skipped {
		t.Errorf("locks sampled in the first tick %v, later %v; pg_stat_statements skipped %v; notes %q", locksFirst, locksLater, skipped, r.Notes())
	}
	for _, n := range r.Notes() {
		if strings.Contains(n, "connection lost") {
			t.Errorf("note %q", n)
		}
	}
}

// TestAlign: after Align(phase) the samples are taken at phase +
// k·Interval (a timer's lateness aside), skipping the times a slow tick
// missed.
func TestAlign(t *testing.T) {
	every := 200 * time.Millisecond
	now := time.Now()
	for _, tc := range []struct {
		phase time.Time
		want  time.Duration
	}{
		{now, every}, {now.Add(-50 * time.Millisecond), 150 * time.Millisecond},
		{now.Add(-450 * time.Millisecond), 150 * time.Millisecond}, {now.Add(30 * time.Millisecond), 30 * time.Millisecond},
		{now.Add(630 * time.Millisecond), 30 * time.Millisecond},
	} {
		if got := untilNext(tc.phase, every, now); got != tc.want {
			t.Errorf("untilNext(now%+v) = %v, want %v", tc.phase.Sub(now), got, tc.want)
		}
	}

	var c collector
	s, err := Start(context.Background(), Options{Interval: every, Sink: c.sink})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	phase := time.Now().Add(70 * time.Millisecond)
	s.Align(phase)
	aligned := func() int {
		n := 0
		for _, smp := range c.run().Samples {
			if smp.Source == "host_cpu" && !smp.Time.Before(phase) && smp.Time.Sub(phase)%every < every/2 {
				n++
			}
		}
		return n
	}
	waittest.Until(t, "three samples at phase + k·interval", 10*time.Second, func() (bool, string) {
		n := aligned()
		return n >= 3, fmt.Sprintf("%d of %d", n, len(c.run().Samples))
	})
	s.Stop()
	for _, smp := range c.run().Samples {
		if off := smp.Time.Sub(phase) % every; smp.Source == "host_cpu" && smp.Time.After(phase) && off >= every/2 {
			t.Errorf("sample at phase%+v: %v after a tick", smp.Time.Sub(phase), off)
		}
	}
}
