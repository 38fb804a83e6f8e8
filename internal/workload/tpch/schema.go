package tpch

import (
	"fmt"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/tpch/dbgen"
)

// columns are the eight tables' columns per Clause 1.4.1, in dbgen's
// order, with PostgreSQL types: identifiers integer (orderkey bigint: at
// scale 1000 order keys reach 6 billion), decimal(15,2) as numeric(15,2).
var columns = lazy.Value[map[dbgen.Table][][2]string]{New: buildColumns}

func buildColumns() map[dbgen.Table][][2]string {
	return map[dbgen.Table][][2]string{
		dbgen.Nation:   {{"n_nationkey", "integer"}, {"n_name", "char(25)"}, {"n_regionkey", "integer"}, {"n_comment", "varchar(152)"}},
		dbgen.Region:   {{"r_regionkey", "integer"}, {"r_name", "char(25)"}, {"r_comment", "varchar(152)"}},
		dbgen.Part:     {{"p_partkey", "integer"}, {"p_name", "varchar(55)"}, {"p_mfgr", "char(25)"}, {"p_brand", "char(10)"}, {"p_type", "varchar(25)"}, {"p_size", "integer"}, {"p_container", "char(10)"}, {"p_retailprice", "numeric(15,2)"}, {"p_comment", "varchar(23)"}},
		dbgen.Supplier: {{"s_suppkey", "integer"}, {"s_name", "char(25)"}, {"s_address", "varchar(40)"}, {"s_nationkey", "integer"}, {"s_phone", "char(15)"}, {"s_acctbal", "numeric(15,2)"}, {"s_comment", "varchar(101)"}},
		dbgen.PartSupp: {{"ps_partkey", "integer"}, {"ps_suppkey", "integer"}, {"ps_availqty", "integer"}, {"ps_supplycost", "numeric(15,2)"}, {"ps_comment", "varchar(199)"}},
		dbgen.Customer: {{"c_custkey", "integer"}, {"c_name", "varchar(25)"}, {"c_address", "varchar(40)"}, {"c_nationkey", "integer"}, {"c_phone", "char(15)"}, {"c_acctbal", "numeric(15,2)"}, {"c_mktsegment", "char(10)"}, {"c_comment", "varchar(117)"}},
		dbgen.Orders:   {{"o_orderkey", "bigint"}, {"o_custkey", "integer"}, {"o_orderstatus", "char(1)"}, {"o_totalprice", "numeric(15,2)"}, {"o_orderdate", "date"}, {"o_orderpriority", "char(15)"}, {"o_clerk", "char(15)"}, {"o_shippriority", "integer"}, {"o_comment", "varchar(79)"}},
		dbgen.LineItem: {{"l_orderkey", "bigint"}, {"l_partkey", "integer"}, {"l_suppkey", "integer"}, {"l_linenumber", "integer"}, {"l_quantity", "numeric(15,2)"}, {"l_extendedprice", "numeric(15,2)"}, {"l_discount", "numeric(15,2)"}, {"l_tax", "numeric(15,2)"}, {"l_returnflag", "char(1)"}, {"l_linestatus", "char(1)"}, {"l_shipdate", "date"}, {"l_commitdate", "date"}, {"l_receiptdate", "date"}, {"l_shipinstruct", "char(25)"}, {"l_shipmode", "char(10)"}, {"l_comment", "varchar(44)"}},
	}
}

// primaryKeys per Clause 1.4.2.2.
var primaryKeys = lazy.Value[map[dbgen.Table]string]{New: buildPrimaryKeys}

func buildPrimaryKeys() map[dbgen.Table]string {
	return map[dbgen.Table]string{
		dbgen.Nation: "n_nationkey", dbgen.Region: "r_regionkey", dbgen.Part: "p_partkey", dbgen.Supplier: "s_suppkey",
		dbgen.PartSupp: "ps_partkey, ps_suppkey", dbgen.Customer: "c_custkey", dbgen.Orders: "o_orderkey",
		dbgen.LineItem: "l_orderkey, l_linenumber",
	}
}

// foreignKey is one of Clause 1.4.2.3's foreign keys.
type foreignKey struct {
	cols, ref, refCols string
	// colocated: allowed between Citus tables in every layout (a
	// reference table, or tables distributed by the key's columns and
	// colocated); the others only in the reference layout (citus.go),
	// where they point at a reference table.
	colocated bool
}

var foreignKeys = lazy.Value[map[dbgen.Table][]foreignKey]{New: buildForeignKeys}

func buildForeignKeys() map[dbgen.Table][]foreignKey {
	return map[dbgen.Table][]foreignKey{
		dbgen.Nation:   {{"n_regionkey", "region", "r_regionkey", true}},
		dbgen.Supplier: {{"s_nationkey", "nation", "n_nationkey", true}},
		dbgen.Customer: {{"c_nationkey", "nation", "n_nationkey", true}},
		dbgen.PartSupp: {{"ps_partkey", "part", "p_partkey", true}, {"ps_suppkey", "supplier", "s_suppkey", true}},
		dbgen.Orders:   {{"o_custkey", "customer", "c_custkey", false}},
		dbgen.LineItem: {{"l_orderkey", "orders", "o_orderkey", true}, {"l_partkey, l_suppkey", "partsupp", "ps_partkey, ps_suppkey", false}},
	}
}

// indexes are the ordinary indexes PostgreSQL TPC-H setups commonly add:
// the foreign keys' columns (joins, and RF2's deletes) and the date
// columns the queries restrict.
var indexes = lazy.Value[map[dbgen.Table][]string]{New: buildIndexes}

func buildIndexes() map[dbgen.Table][]string {
	return map[dbgen.Table][]string{
		dbgen.Nation:   {"n_regionkey"},
		dbgen.Supplier: {"s_nationkey"},
		dbgen.Customer: {"c_nationkey"},
		dbgen.PartSupp: {"ps_suppkey"},
		dbgen.Orders:   {"o_custkey", "o_orderdate"},
		dbgen.LineItem: {"l_partkey, l_suppkey", "l_shipdate", "l_suppkey"},
	}
}

// stateTable is pgarena's own table of the load's scale and the next
// refresh sets of RF1 and RF2 (dbgen -U: set n inserts new orders, and
// deletes old ones; a set is used once, so repeated runs never insert a key
// twice). One row.
const stateTable = "tpch_state"

// chunkRows is the base rows of one batch: about 130 KB of lineitem text.
const chunkRows = 1000

// tables returns the schema: the eight tables per Clause 1.4, loaded by
// COPY from dbgen's text in chunks, then the state table.
func tables(g *dbgen.Generator, citus, allKeys bool) []workload.Table {
	var out []workload.Table
	for _, t := range dbgen.Tables {
		cols := columns.Get()[t]
		ddl := "create table " + t.String() + " ("
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c[0]
			if i > 0 {
				ddl += ", "
			}
			ddl += c[0] + " " + c[1] + " not null"
		}
		ddl += ")"
		base := g.BaseRows(t)
		rows := base
		switch t {
		case dbgen.PartSupp:
			rows = 4 * base
		case dbgen.LineItem:
			rows = 4 * base // 1 to 7 lines an order, 4 on average (an estimate for progress)
		}
		out = append(out, workload.Table{
			Name:     t.String(),
			Create:   []string{ddl},
			Columns:  names,
			Rows:     workload.Batches{N: int((base + chunkRows - 1) / chunkRows), Rows: rows, Text: chunk(g, t)},
			PostLoad: postLoad(t, citus, allKeys),
		})
	}
	sf := g.Scale()
	out = append(out, workload.Table{
		Name:     stateTable,
		Create:   []string{"create table " + stateTable + " (scale float8 not null, rf1_next integer not null, rf2_next integer not null)"},
		Columns:  []string{"scale", "rf1_next", "rf2_next"},
		Rows:     workload.Batches{N: 1, Rows: 1, Fill: func(_ int, dst [][]any) [][]any { return append(dst[:0], []any{sf, 1, 1}) }},
		PostLoad: nil,
	})
	return out
}

// postLoad is a table's primary key, indexes and foreign keys (on Citus
// only those between colocated or reference tables, unless allKeys). The primary key's
// index is built as an index first, so the loader builds it at once with
// the table's other indexes (its connections in parallel), then becomes
// the key (the columns are NOT NULL: no scan); Citus gets the plain form.
func postLoad(t dbgen.Table, citus, allKeys bool) []string {
	name := t.String()
	stmts := []string{fmt.Sprintf("create unique index %s_pkey on %s (%s)", name, name, primaryKeys.Get()[t])}
	if citus {
		stmts = []string{fmt.Sprintf("alter table %s add primary key (%s)", name, primaryKeys.Get()[t])}
	}
	for i, cols := range indexes.Get()[t] {
		stmts = append(stmts, fmt.Sprintf("create index %s_i%d on %s (%s)", name, i+1, name, cols))
	}
	if !citus {
		stmts = append(stmts, fmt.Sprintf("alter table %s add constraint %s_pkey primary key using index %s_pkey", name, name, name))
	}
	for _, fk := range foreignKeys.Get()[t] {
		if citus && !fk.colocated && !allKeys {
			continue
		}
		stmts = append(stmts, fmt.Sprintf("alter table %s add foreign key (%s) references %s (%s)", name, fk.cols, fk.ref, fk.refCols))
	}
	return stmts
}

// appender is an io.Writer appending to a byte slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) { a.b = append(a.b, p...); return len(p), nil }

// chunk makes batch i of t: dbgen's lines for base rows [i·chunkRows,
// (i+1)·chunkRows), in COPY text format.
func chunk(g *dbgen.Generator, t dbgen.Table) func(int, []byte) ([]byte, int64, error) {
	return func(i int, dst []byte) ([]byte, int64, error) {
		from := int64(i) * chunkRows
		to := min(from+chunkRows, g.BaseRows(t))
		a := appender{dst}
		n, err := g.Write(&a, t, from, to, dbgen.COPY)
		return a.b, n, err
	}
}
