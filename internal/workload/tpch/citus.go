package tpch

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/tpch/qgen"
)

// Layouts on a Citus coordinator (--citus-layout), measured at SF 0.1 on
// a coordinator with 2 workers (Citus 13.2, PostgreSQL 15.20):
//
//   - layoutReference (the default), as Citus's own regression suite lays
//     TPC-H out: lineitem and orders hash-distributed by order key and
//     colocated (every join between them is on it: no repartition), the
//     other six tables reference tables (a copy on every node). 19 of the
//     22 queries run as written; Q17, Q20 and Q22 run in the forms of
//     qgen.CitusSQL, which return the same rows: 22 of 22, no session
//     setting needed.
//   - layoutDistributed: part and partsupp also distributed (by part key,
//     colocated), customer by customer key; nation, region and supplier
//     reference tables. 11 queries fail, the Citus forms included (Q3, Q5,
//     Q7-Q10, Q14, Q17, Q19: "the query contains a join that requires
//     repartitioning"; Q13, Q18: "complex joins are only supported when
//     all distributed tables are co-located and joined on their
//     distribution columns"); with citus.enable_repartition_joins=on
//     (run --session-set) 5 still do (Q8, Q9, Q13, Q17, Q18) and the rest
//     takes 3× as long as the reference layout. Kept for larger scales,
//     where a copy of partsupp and customer on every node costs memory.
//
// pgarena's state table is a reference table in both. Signatures as
// tpcc's citus.go cites.
const (
	layoutReference   = "reference"
	layoutDistributed = "distributed"
)

// citusDDL returns the statements, in order, that distribute the tables
// in layout.
func citusDDL(layout string, shardCount int) []string {
	n := strconv.Itoa(shardCount)
	orders := []string{
		"select create_distributed_table('orders', 'o_orderkey', colocate_with => 'none', shard_count => " + n + ")",
		"select create_distributed_table('lineitem', 'l_orderkey', colocate_with => 'orders')",
	}
	if layout == layoutDistributed {
		return append([]string{
			"select create_reference_table('region')",
			"select create_reference_table('nation')",
			"select create_reference_table('supplier')",
			"select create_reference_table('" + stateTable + "')",
		}, append(orders,
			"select create_distributed_table('part', 'p_partkey', colocate_with => 'none', shard_count => "+n+")",
			"select create_distributed_table('partsupp', 'ps_partkey', colocate_with => 'part')",
			"select create_distributed_table('customer', 'c_custkey', colocate_with => 'none', shard_count => "+n+")",
		)...)
	}
	return append([]string{
		"select create_reference_table('region')",
		"select create_reference_table('nation')",
		"select create_reference_table('supplier')",
		"select create_reference_table('part')",
		"select create_reference_table('partsupp')",
		"select create_reference_table('customer')",
		"select create_reference_table('" + stateTable + "')",
	}, orders...)
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
	return citusDDL(w.citusLayout, w.shardCount)
}

// prepareCitus tells, before a run or a check, whether the tables are
// Citus tables (lineitem distributed): the queries then run in their
// Citus forms (querySQL).
func (w *Workload) prepareCitus(ctx context.Context, conn *pgx.Conn) error {
	var err error
	if w.citus, err = workload.CitusDistributed(ctx, conn, "lineitem"); err != nil {
		return fmt.Errorf("tpch: %w", err)
	}
	return nil
}

// querySQL is q's text as it runs on the target: on Citus, qgen's Citus
// form where there is one.
func (w *Workload) querySQL(q qgen.Query) string {
	if !w.citus {
		return q.SQL
	}
	sql, _ := qgen.CitusSQL(q)
	return sql
}

// citusFormNames are the queries that run in a Citus form ("q17 q20 q22").
func citusFormNames() string {
	s := ""
	for i, n := range qgen.CitusForms() {
		if i > 0 {
			s += " "
		}
		s += "q" + strconv.Itoa(n)
	}
	return s
}
