package tpcc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pgarena/pgarena/internal/lazy"
)

// Distribution on a Citus coordinator (Citus 11 and 12).
//
// Every table but item is hash-distributed by its warehouse column, all in
// the colocation group of warehouse, so that a warehouse's rows in every
// table live in shards with the same hash range on the same worker and a
// transaction of one home warehouse is routed to one node. item, read by
// every new-order of every warehouse and never written, is a reference
// table (one shard, a copy on every node). See the Citus docs, "Table
// Co-Location" and "Reference Tables":
// https://docs.citusdata.com/en/stable/sharding/data_modeling.html
//
// Citus requires every primary key and unique index of a distributed table
// to contain its distribution column; HammerDB's keys all lead with the
// warehouse column (customer_i2 and orders_i2 too), which the tests check.
//
// The table statements are for empty tables: run them after the tables are
// created and before the load. create_distributed_table on a table that
// holds rows copies them into the shards and leaves the local copy on the
// coordinator (truncate_local_data_after_distributing_table removes it).
//
// Signatures (https://docs.citusdata.com/en/stable/develop/api_udf.html;
// citusdata/citus, src/backend/distributed/sql/udfs/):
//
//	create_distributed_table(table_name regclass, distribution_column text,
//	    distribution_type citus.distribution_type DEFAULT 'hash',
//	    colocate_with text DEFAULT 'default', shard_count int DEFAULT NULL)
//	                                            -- since 10.1 (10.1-1.sql)
//	create_reference_table(table_name regclass)
//	create_distributed_function(function_name regprocedure,
//	    distribution_arg_name text DEFAULT NULL,
//	    colocate_with text DEFAULT 'default', ...)
//	                                            -- 11.0 adds a bool (force_delegation), unused here
//
// shard_count may only be combined with colocate_with 'default' or 'none'
// ("Cannot use colocate_with with a table and shard_count at the same
// time", create_distributed_table.c), so warehouse takes shard_count and
// colocate_with => 'none' (a colocation group of its own, not shared with
// unrelated int-distributed tables of the database), and the other tables
// join it with colocate_with => 'warehouse', inheriting its shard count.
// This form is the same on Citus 11 and 12 and needs no session setting
// (the older way, set citus.shard_count before create_distributed_table,
// also works but is a setting the loader's connections would have to
// share).

// defaultShardCount is --shard-count's default: 48 divides evenly over
// 1, 2, 3, 4, 6, 8, 12, 16, 24 and 48 workers.
const defaultShardCount = 48

// maxShardCount is Citus's limit (MAX_SHARD_COUNT in shared_library_init.h).
const maxShardCount = 64000

// citusOptions configure the distribution.
type citusOptions struct {
	shardCount  int  // citus.shard_count for the distributed tables (0 means defaultShardCount)
	storedProcs bool // also distribute the pgarena_tpcc_* functions
}

// citusTable is one table's distribution: column is its warehouse column,
// or "" for the reference table.
type citusTable struct {
	table, column string
}

// citusTables lists the nine tables, warehouse first (the others are
// colocated with it, so it must be distributed before them).
var citusTables = []citusTable{
	{"warehouse", "w_id"},
	{"district", "d_w_id"},
	{"customer", "c_w_id"},
	{"history", "h_w_id"},
	{"new_order", "no_w_id"},
	{"orders", "o_w_id"},
	{"order_line", "ol_w_id"},
	{"stock", "s_w_id"},
	{"item", ""},
}

// citusProcWarehouseArg is, for each function of procs.go, the 1-based
// position of its home-warehouse argument (p_w in every one), named '$n'
// as in Citus's own example for a TPC-C delivery function,
// create_distributed_function('delivery(int,int)', '$1') (citusdata/citus,
// src/backend/distributed/README.md, "Function call delegation"). A call of a
// distributed function is delegated to the worker holding that warehouse's
// shards when it runs outside a transaction block, as pgarena's calls do.
// Payment's customer warehouse (p_cw, remote in 15% of payments) and
// new-order's remote supplying warehouses make the worker run a
// distributed transaction; those are the specification's cross-warehouse
// transactions.
var citusProcWarehouseArg = lazy.Value[map[string]int]{New: buildCitusProcWarehouseArg}

func buildCitusProcWarehouseArg() map[string]int {
	return map[string]int{
		"pgarena_tpcc_new_order":    1,
		"pgarena_tpcc_payment":      1,
		"pgarena_tpcc_order_status": 1,
		"pgarena_tpcc_delivery":     1,
		"pgarena_tpcc_stock_level":  1,
	}
}

// validateShardCount checks --shard-count.
func validateShardCount(n int) error {
	if n < 1 || n > maxShardCount {
		return fmt.Errorf("shard-count must be between 1 and %d (got %d)", maxShardCount, n)
	}
	return nil
}

// citusDDL returns the statements, in order, that distribute the nine
// tables on a Citus coordinator: warehouse with o.shardCount shards, the
// other seven distributed tables colocated with it, item a reference
// table. With o.storedProcs the statements of citusFunctionDDL follow; they
// need the functions, which init creates after the load (PostLoad), so a
// caller that distributes the tables before the load runs citusDDL without
// storedProcs first and citusFunctionDDL after PostLoad.
func citusDDL(o citusOptions) []string {
	n := o.shardCount
	if n == 0 {
		n = defaultShardCount
	}
	var stmts []string
	for i, t := range citusTables {
		switch {
		case t.column == "":
			stmts = append(stmts, "select create_reference_table("+citusQuote(t.table)+")")
		case i == 0:
			stmts = append(stmts, "select create_distributed_table("+citusQuote(t.table)+", "+citusQuote(t.column)+
				", colocate_with => 'none', shard_count => "+strconv.Itoa(n)+")")
		default:
			stmts = append(stmts, "select create_distributed_table("+citusQuote(t.table)+", "+citusQuote(t.column)+
				", colocate_with => "+citusQuote(citusTables[0].table)+")")
		}
	}
	if o.storedProcs {
		stmts = append(stmts, citusFunctionDDL()...)
	}
	return stmts
}

// citusFunctionDDL returns the create_distributed_function statements (run
// after the functions exist), one per procSignatures entry, each
// distributed by its warehouse argument and colocated with warehouse.
func citusFunctionDDL() []string {
	stmts := make([]string, 0, len(procSignatures))
	for _, sig := range procSignatures {
		arg, ok := citusProcWarehouseArg.Get()[citusProcName(sig)]
		if !ok {
			panic("tpcc: no Citus distribution argument for " + sig) // caught by TestCitusFunctions
		}
		stmts = append(stmts, "select create_distributed_function("+citusQuote(sig)+", '$"+strconv.Itoa(arg)+
			"', colocate_with => "+citusQuote(citusTables[0].table)+")")
	}
	return stmts
}

// citusProcName is the name of a signature "name(types)".
func citusProcName(sig string) string {
	name, _, _ := strings.Cut(sig, "(")
	return name
}

// citusQuote quotes s as an SQL string literal.
func citusQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
