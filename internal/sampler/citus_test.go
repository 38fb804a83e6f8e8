package sampler

import (
	"context"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestCitusWorkers samples a coordinator and its two workers while
// single-shard queries all go to worker 0, one of them sleeping there:
// each worker has its series, Citus's internal connections are apart from
// the clients, worker 0's top waits show the sleep, the CPU of its
// postmaster's process tree (it runs on this host) shows the queries, and
// a finding names worker 0 for doing more than its share.
func TestCitusWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsn := pgtest.CitusDSN(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "create table a (k int primary key, v int); select create_distributed_table('a', 'k', shard_count => 2); insert into a select g, g from generate_series(1, 1000) g"); err != nil {
		t.Fatal(err)
	}
	// a key whose shard is on worker 0
	w0 := pgtest.CitusCluster(t).Workers[0].Port()
	var key int
	var shard int64
	if err := conn.QueryRow(ctx, "select shardid from citus_shards where table_name = 'a'::regclass and nodeport = $1", w0).Scan(&shard); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "select g from generate_series(1, 1000) g where get_shard_id_for_distribution_column('a', g) = $1 limit 1", shard).Scan(&key); err != nil {
		t.Fatal(err)
	}
	var workers []CitusWorker
	for i, name := range []string{"w0", "w1"} {
		workers = append(workers, CitusWorker{Name: name, Config: parseConfig(t, pgtest.CitusWorkerDSN(t, dsn, i))})
	}
	// a session sleeping on worker 0 all along: its wait is Timeout:PgSleep
	sleeper, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sleeper.Close(context.Background())
	sctx, stopSleep := context.WithCancel(ctx)
	slept := make(chan struct{})
	go func() {
		defer close(slept)
		for sctx.Err() == nil {
			_, _ = sleeper.Exec(sctx, "select v from a where k = $1 and pg_sleep(0.5) is not null", key)
		}
	}()
	var c collector
	s, err := Start(ctx, Options{ConnConfig: parseConfig(t, dsn), Interval: 200 * time.Millisecond, Sink: c.sink, CitusWorkers: workers})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		for i := 0; i < 50; i++ {
			if _, err := conn.Exec(ctx, "select v from a where k = $1", key); err != nil {
				t.Fatal(err)
			}
		}
		r := c.run()
		if maxOf(r.Series("citus.w0.xact_commit_per_s")) > 0 && len(r.Series("citus.w1.connections.client")) > 2 &&
			maxOf(r.Series("citus.w0.wait.Timeout:PgSleep")) > 0 && maxOf(r.Series("citus.w0.cpu_cores")) > 0 || time.Now().After(deadline) {
			break
		}
	}
	stopSleep()
	<-slept
	fs := s.Stop()
	r := c.run()
	for _, name := range []string{"citus.w0.xact_commit_per_s", "citus.w1.xact_commit_per_s", "citus.w0.rows_read_per_s", "citus.w0.wal_bytes_per_s", "citus.w0.waiting", "citus.w0.connections.client", "citus.w0.connections.citus_internal",
		"citus.w0.wait.Timeout:PgSleep", "citus.w0.wait_type.Timeout", "citus.w0.cpu_cores", "citus.w0.cpu_pct", "citus.w1.cpu_cores"} {
		if len(r.Series(name)) == 0 {
			t.Errorf("no series %s", name)
		}
	}
	if maxOf(r.Series("citus.w0.connections.citus_internal")) == 0 {
		t.Errorf("worker 0 shows no Citus internal connection (the coordinator's)")
	}
	if maxOf(r.Series("citus.w0.wait.Timeout:PgSleep")) < 1 || maxOf(r.Series("citus.w0.waiting")) < 1 {
		t.Errorf("worker 0's sleeping session not among its waits")
	}
	if len(r.Series("citus.w1.wait.Timeout:PgSleep")) > 0 {
		t.Errorf("worker 1 shows the sleep that runs on worker 0")
	}
	if maxOf(r.Series("citus.w0.cpu_cores")) <= 0 {
		t.Errorf("worker 0's postmaster tree used no CPU while serving the queries")
	}
	if hasFinding(fs, "sampler_note", "host CPU not sampled") {
		t.Errorf("findings %+v: a local worker's host CPU not sampled", fs)
	}
	if !hasFinding(fs, "citus_worker_skew", "citus worker w0 did much more than its share") {
		t.Errorf("findings %+v, want worker w0's skew", fs)
	}
}

// TestCitusRemoteWorkerCPU: a worker at another host's address has no CPU
// series, and the run's notes say why.
func TestCitusRemoteWorkerCPU(t *testing.T) {
	cfg := parseConfig(t, "host=198.51.100.7 port=5432 user=x dbname=x connect_timeout=1")
	s := newCitusSource([]CitusWorker{{Name: "198.51.100.7:5432", Config: cfg}}, 200*time.Millisecond, 5)
	defer s.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var notes []string
	for _, smp := range s.sample(ctx, time.Now()) {
		notes = append(notes, smp.Note)
	}
	want := "citus worker 198.51.100.7:5432: host CPU not sampled: the worker is on another host (pgarena reads this host's /proc only)"
	if !slices.Contains(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
}

// TestReadStat: the sampler's own parse of /proc/<pid>/stat gives the
// parent and CPU time procfs's full parse gives.
func TestReadStat(t *testing.T) {
	fs, err := procfs.NewFS(procfs.DefaultMountPoint)
	if err != nil {
		t.Skip("no /proc: " + err.Error())
	}
	self, err := fs.Self()
	if err != nil {
		t.Fatal(err)
	}
	before, err := self.Stat()
	if err != nil {
		t.Fatal(err)
	}
	ppid, secs, ok := readStat("/proc/self/stat", make([]byte, 1024))
	after, err := self.Stat()
	if err != nil {
		t.Fatal(err)
	}
	lo := float64(before.UTime+before.STime+uint(before.CUTime+before.CSTime)) / clockTicks
	hi := float64(after.UTime+after.STime+uint(after.CUTime+after.CSTime)) / clockTicks
	if !ok || ppid != before.PPID || secs < lo || secs > hi {
		t.Errorf("readStat = ppid %d, %v s (ok %v); procfs: ppid %d, %v to %v s", ppid, secs, ok, before.PPID, lo, hi)
	}
}

// TestOnThisHost: loopback, a Unix socket, the host name and the
// addresses of this machine's interfaces are this host; others are not.
func TestOnThisHost(t *testing.T) {
	name, _ := os.Hostname()
	here := []string{"127.0.0.1", "::1", "localhost", "/var/run/postgresql", name}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				here = append(here, n.IP.String())
			}
		}
	}
	for _, h := range here {
		if !onThisHost(h) {
			t.Errorf("onThisHost(%q) = false", h)
		}
	}
	for _, h := range []string{"198.51.100.7", "worker-1.example", "2001:db8::1"} {
		if onThisHost(h) {
			t.Errorf("onThisHost(%q) = true", h)
		}
	}
}
