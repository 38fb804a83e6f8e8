package session

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestDescribeCitus reads a coordinator with two workers: the version,
// both workers with their placements, the tables by type, and nothing
// on plain PostgreSQL.
func TestDescribeCitus(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.CitusDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range []string{
		"create table a (k int primary key, v text)",
		"create table r (k int primary key)",
		"select create_distributed_table('a', 'k', shard_count => 4)",
		"select create_reference_table('r')",
		"insert into a select g, repeat('x', 100) from generate_series(1, 1000) g",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := DescribeCitus(ctx, conn, []string{"a", "r"})
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.ActiveWorkers() != 2 || len(c.Tables) != 2 {
		t.Fatalf("topology %+v", c)
	}
	for _, w := range c.Workers {
		if w.Shards != 2 || w.Bytes == 0 {
			t.Errorf("worker %+v: want 2 shards of a with bytes", w)
		}
	}
	if c.Tables[0].Name != "a" || c.Tables[0].Type != "distributed" || c.Tables[0].Column != "k" || c.Tables[0].Shards != 4 || c.Tables[1].Type != "reference" {
		t.Errorf("tables %+v", c.Tables)
	}
	plain, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	if c, err := DescribeCitus(ctx, plain, nil); c != nil || err != nil {
		t.Errorf("plain PostgreSQL: %+v, %v", c, err)
	}
}
