#!/usr/bin/env python3
"""Pinned TPC-H answer sets for internal/workload/tpch/qgen (answers/sfS.txt[.gz]).

An independent engine over dbgen-identical data: DuckDB runs qgen's 22 validation
queries (the package's own PostgreSQL text; DuckDB accepts it as written) over the
.tbl files of tpchgen-cli (byte-identical to TPC-H dbgen). Not run in CI: it needs
DuckDB's Python package and tpchgen-cli.

  # 1. data and query text at scale S
  tpchgen-cli tbl -s S --output-dir /tmp/tgS
  mkdir -p /tmp/sqlS && PGARENA_TPCH_SQL_OUT=/tmp/sqlS PGARENA_TPCH_SQL_SF=S \
      go test -count=1 -run TestWriteValidationSQL ./internal/workload/tpch/qgen/
  # 2. the answers
  python3 bench/tpch-answers.py duckdb --sf S --tbl /tmp/tgS --sql /tmp/sqlS \
      > internal/workload/tpch/qgen/answers/sfS.txt
  # 3. the spec's answer set (the TPC-H tools' answers/q1.out..q22.out) in the same format
  python3 bench/tpch-answers.py official --answers DIR > /tmp/sf1-official.txt
  # 4. check one against the other with qgen.Check (a Go test, skipped without the files)
  PGARENA_TPCH_ANSWERS_A=/tmp/sf1-official.txt PGARENA_TPCH_ANSWERS_B=/tmp/sf1-duckdb.txt \
      go test -count=1 -run TestAnswerFilesAgree ./internal/workload/tpch/qgen/
"""
import argparse
import datetime
import decimal
import os
import sys

# Clause 1.4.1 (CHAR and VARCHAR are both VARCHAR in DuckDB: no blank padding).
SCHEMA = {
    "nation": "n_nationkey integer, n_name varchar, n_regionkey integer, n_comment varchar",
    "region": "r_regionkey integer, r_name varchar, r_comment varchar",
    "part": "p_partkey integer, p_name varchar, p_mfgr varchar, p_brand varchar, p_type varchar, "
            "p_size integer, p_container varchar, p_retailprice decimal(15,2), p_comment varchar",
    "supplier": "s_suppkey integer, s_name varchar, s_address varchar, s_nationkey integer, "
                "s_phone varchar, s_acctbal decimal(15,2), s_comment varchar",
    "partsupp": "ps_partkey integer, ps_suppkey integer, ps_availqty integer, "
                "ps_supplycost decimal(15,2), ps_comment varchar",
    "customer": "c_custkey integer, c_name varchar, c_address varchar, c_nationkey integer, "
                "c_phone varchar, c_acctbal decimal(15,2), c_mktsegment varchar, c_comment varchar",
    "orders": "o_orderkey bigint, o_custkey integer, o_orderstatus varchar, o_totalprice decimal(15,2), "
              "o_orderdate date, o_orderpriority varchar, o_clerk varchar, o_shippriority integer, "
              "o_comment varchar",
    "lineitem": "l_orderkey bigint, l_partkey integer, l_suppkey integer, l_linenumber integer, "
                "l_quantity decimal(15,2), l_extendedprice decimal(15,2), l_discount decimal(15,2), "
                "l_tax decimal(15,2), l_returnflag varchar, l_linestatus varchar, l_shipdate date, "
                "l_commitdate date, l_receiptdate date, l_shipinstruct varchar, l_shipmode varchar, "
                "l_comment varchar",
}

# The column kinds of qgen's answers.go (check_answers/colprecision.txt): 's' columns
# keep leading blanks (addresses may start with one), the others are trimmed.
KINDS = {1: "ssSSSSaaac", 2: "nssissss", 3: "iSsi", 4: "sc", 5: "sS", 6: "S", 7: "ssiS", 8: "ir",
         9: "siS", 10: "isSnssss", 11: "iS", 12: "sSS", 13: "cc", 14: "r", 15: "isssS", 16: "ssnc",
         17: "a", 18: "siisnS", 19: "S", 20: "ss", 21: "sc", 22: "ncS"}


def text(v):
    if v is None:
        return "\\N"  # NULL, as COPY's text format writes it (Q17 at SF 0.01)
    if isinstance(v, float):
        return "%.6f" % v
    if isinstance(v, (datetime.date, decimal.Decimal, int)):
        return str(v)
    return v


def check_field(s):
    if "|" in s or "\n" in s:
        sys.exit("a value contains '|' or a newline: %r" % s)
    return s


def duckdb_answers(args):
    import duckdb
    con = duckdb.connect()
    for table, cols in SCHEMA.items():
        con.execute("create table %s (%s)" % (table, cols))
        names = [c.split()[0] for c in cols.split(", ")]
        spec = {n: "varchar" for n in names}
        spec["trailing_empty"] = "varchar"  # dbgen ends each line with '|'
        con.execute("insert into %s select %s from read_csv(?, delim='|', header=false, quote='', escape='', "
                    "columns=%s)" % (table, ", ".join(names), spec), [os.path.join(args.tbl, table + ".tbl")])
    print("# TPC-H validation answers at SF %s: DuckDB %s over tpchgen-cli's data (bench/tpch-answers.py)"
          % (args.sf, duckdb.__version__))
    for n in range(1, 23):
        sql = open(os.path.join(args.sql, "q%d.sql" % n)).read()
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        print("-- q%d" % n)
        print("|".join(cols))
        for row in cur.fetchall():
            print("|".join(check_field(text(v)) for v in row))


def official_answers(args):
    print("# TPC-H answer set at SF 1: the TPC-H tools' answers/q1.out..q22.out (spec data)")
    for n in range(1, 23):
        path = os.path.join(args.answers, "q%d.out" % n)
        if not os.path.exists(path):
            continue
        lines = [l.rstrip("\n") for l in open(path) if l.strip()]
        print("-- q%d" % n)
        print("|".join(c.strip() for c in lines[0].split("|")))
        for line in lines[1:]:
            fields = line.split("|")
            out = [f.rstrip(" ") if k == "s" else f.strip() for f, k in zip(fields, KINDS[n])]
            if len(fields) != len(KINDS[n]):
                sys.exit("q%d: %d fields, want %d: %r" % (n, len(fields), len(KINDS[n]), line))
            print("|".join(out))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("duckdb")
    d.add_argument("--sf", required=True)
    d.add_argument("--tbl", required=True)
    d.add_argument("--sql", required=True)
    o = sub.add_parser("official")
    o.add_argument("--answers", required=True)
    args = p.parse_args()
    duckdb_answers(args) if args.cmd == "duckdb" else official_answers(args)


if __name__ == "__main__":
    main()
