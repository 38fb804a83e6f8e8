package sampler

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestCitusWorkers samples a coordinator and its two workers while
// single-shard queries all go to worker 0: each worker has its series,
// Citus's internal connections are apart from the clients, and a finding
// names worker 0 for doing more than its share.
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
		if maxOf(r.Series("citus.w0.xact_commit_per_s")) > 0 && len(r.Series("citus.w1.connections.client")) > 2 || time.Now().After(deadline) {
			break
		}
	}
	fs := s.Stop()
	r := c.run()
	for _, name := range []string{"citus.w0.xact_commit_per_s", "citus.w1.xact_commit_per_s", "citus.w0.rows_read_per_s", "citus.w0.wal_bytes_per_s", "citus.w0.waiting", "citus.w0.connections.client", "citus.w0.connections.citus_internal"} {
		if len(r.Series(name)) == 0 {
			t.Errorf("no series %s", name)
		}
	}
	if maxOf(r.Series("citus.w0.connections.citus_internal")) == 0 {
		t.Errorf("worker 0 shows no Citus internal connection (the coordinator's)")
	}
	if !hasFinding(fs, "citus_worker_skew", "citus worker w0 did much more than its share") {
		t.Errorf("findings %+v, want worker w0's skew", fs)
	}
}
