package pgtest

import (
	"context"
	"testing"
)

// TestCitusTwoWorkers: a fresh database on the coordinator sees both
// workers active, and a distributed table's shards land on them.
func TestCitusTwoWorkers(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, CitusDSN(t))
	var workers int
	if err := conn.QueryRow(ctx, "select count(*) from pg_dist_node where noderole = 'primary' and isactive and groupid <> 0").Scan(&workers); err != nil {
		t.Fatal(err)
	}
	if workers != CitusWorkers {
		t.Fatalf("active workers: %d, want %d", workers, CitusWorkers)
	}
	if _, err := conn.Exec(ctx, "create table t (k int primary key); select create_distributed_table('t', 'k', shard_count => 4)"); err != nil {
		t.Fatal(err)
	}
	var nodes int
	if err := conn.QueryRow(ctx, "select count(distinct nodeport) from citus_shards where table_name = 't'::regclass").Scan(&nodes); err != nil {
		t.Fatal(err)
	}
	if nodes != CitusWorkers {
		t.Fatalf("shards of t on %d nodes, want %d", nodes, CitusWorkers)
	}
	// a worker holds the database too (CitusWorkerDSN)
	w := connect(t, CitusWorkerDSN(t, CitusDSN(t), 0))
	var one int
	if err := w.QueryRow(ctx, "select 1 from pg_extension where extname = 'citus'").Scan(&one); err != nil {
		t.Fatal(err)
	}
	t.Logf("Citus %s", CitusCluster(t).Version)
}
