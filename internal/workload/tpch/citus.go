package tpch

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/workload"
)

// Distribution on a Citus coordinator, as the issue sets it out and as
// Citus's own TPC-H guidance does: lineitem and orders hash-distributed by
// order key and colocated (Q3, Q4, Q5, Q7-Q10, Q12, Q18, Q21 join them on
// it: no repartition), part and partsupp by part key and colocated,
// customer by customer key, and the small nation, region and supplier as
// reference tables (a copy on every node), as is pgarena's state table.
// Foreign keys between tables that are not colocated are left out
// (schema.go): Citus refuses them. Signatures as tpcc's citus.go cites.

// citusDDL returns the statements, in order, that distribute the tables.
func citusDDL(shardCount int) []string {
	n := strconv.Itoa(shardCount)
	return []string{
		"select create_reference_table('region')",
		"select create_reference_table('nation')",
		"select create_reference_table('supplier')",
		"select create_reference_table('" + stateTable + "')",
		"select create_distributed_table('orders', 'o_orderkey', colocate_with => 'none', shard_count => " + n + ")",
		"select create_distributed_table('lineitem', 'l_orderkey', colocate_with => 'orders')",
		"select create_distributed_table('part', 'p_partkey', colocate_with => 'none', shard_count => " + n + ")",
		"select create_distributed_table('partsupp', 'ps_partkey', colocate_with => 'part')",
		"select create_distributed_table('customer', 'c_custkey', colocate_with => 'none', shard_count => " + n + ")",
	}
}

// PrepareInit implements workload.InitPreparer: with the citus extension
// on the target, init distributes the tables; --citus without it is an
// error.
func (w *Workload) PrepareInit(ctx context.Context, conn *pgx.Conn) error {
	has, err := workload.Citus(ctx, conn, "tpch", w.citus)
	w.citus = has
	return err
}

// Distribute implements workload.Distributor.
func (w *Workload) Distribute() []string {
	if !w.citus {
		return nil
	}
	return citusDDL(w.shardCount)
}
