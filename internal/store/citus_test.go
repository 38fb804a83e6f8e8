package store

import (
	"strings"
	"testing"
)

// TestCitusLines: the workers, the tables by colocation group, the
// functions, and the warnings for 0 workers and for a worker holding
// more than its share.
func TestCitusLines(t *testing.T) {
	c := &CitusInfo{Version: "Citus 13.2.2 on x86_64-pc-linux-gnu",
		Workers: []CitusNode{{Host: "w1", Port: 5432, Active: true, Shards: 24, Bytes: 3 << 20}, {Host: "w2", Port: 5432, Active: true, Shards: 24, Bytes: 1 << 20}},
		Tables: []CitusTable{{Name: "orders", Type: "distributed", Column: "o_w_id", Colocation: 1, Shards: 48},
			{Name: "item", Type: "reference", Colocation: 2, Shards: 1}},
		Functions: []CitusFunction{{Signature: "payment(integer)", Arg: 1, Colocation: 1}}}
	got := strings.Join(c.Lines(), "\n")
	for _, want := range []string{
		"citus: Citus 13.2.2, 2 workers: w1:5432 (24 shards, 3.0 MiB), w2:5432 (24 shards, 1.0 MiB)",
		"citus: distributed, colocated (group 1, 48 shards): orders by o_w_id",
		"citus: reference tables: item",
		"citus: distributed functions: payment(integer) by $1",
		"citus: warning: placement skew: worker w1:5432 holds 75% of the distributed tables' bytes (2 workers)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
	c.Workers = nil
	c.Coordinator = &CitusNode{Host: "c", Port: 5432, Active: true, Shards: 48, Bytes: 4 << 20}
	if got := strings.Join(c.Lines(), "\n"); !strings.Contains(got, "0 active workers: every shard is on the coordinator") || !strings.Contains(got, "the coordinator holds 48 shards") {
		t.Errorf("0 workers:\n%s", got)
	}
}
