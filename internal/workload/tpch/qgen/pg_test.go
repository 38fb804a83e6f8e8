package qgen

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// schema is Clause 1.4.1's tables with their primary keys (Clause 1.4.2)
// and one index for Q17's and Q20's correlated subqueries, which
// PostgreSQL runs once per outer row.
const schema = `
create table nation (n_nationkey integer primary key, n_name char(25) not null, n_regionkey integer not null, n_comment varchar(152));
create table region (r_regionkey integer primary key, r_name char(25) not null, r_comment varchar(152));
create table part (p_partkey integer primary key, p_name varchar(55) not null, p_mfgr char(25) not null,
	p_brand char(10) not null, p_type varchar(25) not null, p_size integer not null, p_container char(10) not null,
	p_retailprice decimal(15,2) not null, p_comment varchar(23) not null);
create table supplier (s_suppkey integer primary key, s_name char(25) not null, s_address varchar(40) not null,
	s_nationkey integer not null, s_phone char(15) not null, s_acctbal decimal(15,2) not null, s_comment varchar(101) not null);
create table partsupp (ps_partkey integer not null, ps_suppkey integer not null, ps_availqty integer not null,
	ps_supplycost decimal(15,2) not null, ps_comment varchar(199) not null, primary key (ps_partkey, ps_suppkey));
create table customer (c_custkey integer primary key, c_name varchar(25) not null, c_address varchar(40) not null,
	c_nationkey integer not null, c_phone char(15) not null, c_acctbal decimal(15,2) not null,
	c_mktsegment char(10) not null, c_comment varchar(117) not null);
create table orders (o_orderkey bigint primary key, o_custkey integer not null, o_orderstatus char(1) not null,
	o_totalprice decimal(15,2) not null, o_orderdate date not null, o_orderpriority char(15) not null,
	o_clerk char(15) not null, o_shippriority integer not null, o_comment varchar(79) not null);
create table lineitem (l_orderkey bigint not null, l_partkey integer not null, l_suppkey integer not null,
	l_linenumber integer not null, l_quantity decimal(15,2) not null, l_extendedprice decimal(15,2) not null,
	l_discount decimal(15,2) not null, l_tax decimal(15,2) not null, l_returnflag char(1) not null,
	l_linestatus char(1) not null, l_shipdate date not null, l_commitdate date not null, l_receiptdate date not null,
	l_shipinstruct char(25) not null, l_shipmode char(10) not null, l_comment varchar(44) not null,
	primary key (l_orderkey, l_linenumber));
`

// TestValidationOnPostgres loads tpchgen-cli's .tbl files from
// $PGARENA_TPCH_TBL (scale $PGARENA_TPCH_SF, default 0.01) into a fresh
// database, runs the 22 validation queries and checks them against the
// pinned answer set. Skipped unless PGARENA_TPCH_TBL is set: CI runs this
// end to end in internal/workload/tpch, with its own loader.
func TestValidationOnPostgres(t *testing.T) {
	dir := os.Getenv("PGARENA_TPCH_TBL")
	if dir == "" {
		t.Skip("set PGARENA_TPCH_TBL to a directory of tpchgen-cli .tbl files (and PGARENA_TPCH_SF to its scale)")
	}
	sf := 0.01
	if s := os.Getenv("PGARENA_TPCH_SF"); s != "" {
		var err error
		if sf, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatal(err)
		}
	}
	want, ok := Answers(sf)
	if !ok {
		t.Fatalf("no answer set pinned for SF %v", sf)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	conn := pgtest.Connect(t, pgtest.DSN(t), pgx.QueryExecModeSimpleProtocol)
	if _, err := conn.Exec(ctx, schema); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, table := range []string{"nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"} {
		copyTBL(ctx, t, conn, table, filepath.Join(dir, table+".tbl"))
	}
	if _, err := conn.Exec(ctx, "create index on lineitem (l_partkey, l_suppkey); analyze"); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded SF %v in %v", sf, time.Since(start).Round(time.Millisecond))
	for n := 1; n <= NumQueries; n++ {
		q := Validation(n, sf)
		began := time.Now()
		rows, err := conn.Query(ctx, q.SQL)
		if err != nil {
			t.Fatalf("Q%d: %v", n, err)
		}
		var got [][]string
		for rows.Next() {
			var row []string
			for _, v := range rows.RawValues() {
				if v == nil {
					row = append(row, Null)
				} else {
					row = append(row, string(v))
				}
			}
			got = append(got, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("Q%d: %v", n, err)
		}
		if err := Check(n, got, want[n]); err != nil {
			t.Errorf("%v", err)
			continue
		}
		t.Logf("Q%d: %d rows match (%v)", n, len(got), time.Since(began).Round(time.Millisecond))
	}
}

// copyTBL copies one .tbl file into table, dropping dbgen's trailing '|'.
func copyTBL(ctx context.Context, t *testing.T, conn *pgx.Conn, table, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		w := bufio.NewWriter(pw)
		for sc.Scan() {
			w.Write(bytes.TrimSuffix(sc.Bytes(), []byte("|")))
			w.WriteByte('\n')
		}
		if err := sc.Err(); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := conn.PgConn().CopyFrom(ctx, pr, "copy "+table+" from stdin with (delimiter '|')"); err != nil {
		pr.CloseWithError(err)
		t.Fatalf("copy %s: %v", table, err)
	}
}

// TestAnswerFilesAgree checks answer file B against answer file A with
// Check (A's rows as the expected answer): the spec's SF 1 answer set
// against DuckDB's (bench/tpch-answers.py). Skipped unless both are set.
func TestAnswerFilesAgree(t *testing.T) {
	a, b := os.Getenv("PGARENA_TPCH_ANSWERS_A"), os.Getenv("PGARENA_TPCH_ANSWERS_B")
	if a == "" || b == "" {
		t.Skip("set PGARENA_TPCH_ANSWERS_A and PGARENA_TPCH_ANSWERS_B to two answer files")
	}
	read := func(path string) map[int]Answer {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		set, err := parseAnswers(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return set
	}
	want, got := read(a), read(b)
	for n := 1; n <= NumQueries; n++ {
		w, ok := want[n]
		if !ok {
			continue
		}
		if err := Check(n, got[n].Rows, w); err != nil {
			t.Errorf("%v", err)
		} else {
			t.Logf("Q%d: %d rows agree", n, len(w.Rows))
		}
	}
}
