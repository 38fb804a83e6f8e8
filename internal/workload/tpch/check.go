package tpch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/tpch/dbgen"
	"github.com/pgarena/pgarena/internal/workload/tpch/qgen"
)

// Check implements workload.Checker: row counts per Clause 4.2.5 and key
// integrity; with --answers, the 22 queries' answers with the validation
// parameters (Clause 2.4.x.4) against the scale's answer set.
func (w *Workload) Check(ctx context.Context, q pgtext.Querier) error {
	conn, err := workload.PgxConn(q)
	if err != nil {
		return err
	}
	if w.answers {
		return w.checkAnswers(ctx, conn)
	}
	// both, so that one run names every table and key that is wrong
	return errors.Join(w.checkCounts(ctx, conn), checkKeys(ctx, conn))
}

// checkCounts: the fixed tables hold exactly their rows at the scale;
// orders its rows plus the orders RF1 inserted minus those RF2 deleted
// (each refresh set is SF × 1500 orders, Clause 4.2.5.2); lineitem 1 to 7
// lines per order (Clause 4.2.3).
func (w *Workload) checkCounts(ctx context.Context, conn *pgx.Conn) error {
	g := w.generator()
	want := map[dbgen.Table]int64{}
	for _, t := range []dbgen.Table{dbgen.Nation, dbgen.Region, dbgen.Part, dbgen.Supplier, dbgen.Customer} {
		want[t] = g.BaseRows(t)
	}
	want[dbgen.PartSupp] = 4 * g.BaseRows(dbgen.Part)
	perSet := int64(len(g.DeleteKeys(1)))
	want[dbgen.Orders] = g.BaseRows(dbgen.Orders) + int64(w.rf1Next-w.rf2Next)*perSet
	got := map[dbgen.Table]int64{}
	var errs []error
	for _, t := range dbgen.Tables {
		var n int64
		if err := conn.QueryRow(ctx, "select count(*) from "+t.String()).Scan(&n); err != nil {
			return fmt.Errorf("tpch check: count %s: %w", t, err)
		}
		got[t] = n
		if wn, ok := want[t]; ok && n != wn {
			errs = append(errs, fmt.Errorf("tpch check: table %s holds %d rows, want %d at scale %g (Clause 4.2.5; refresh sets RF1 %d, RF2 %d done)",
				t, n, wn, w.scale, w.rf1Next-1, w.rf2Next-1))
		}
	}
	if l, o := got[dbgen.LineItem], got[dbgen.Orders]; l < o || l > 7*o {
		errs = append(errs, fmt.Errorf("tpch check: lineitem holds %d rows for %d orders, want 1 to 7 per order (Clause 4.2.3)", l, o))
	}
	return errors.Join(errs...)
}

// keyChecks each count the rows whose key refers to nothing (Clause
// 1.4.2.3's foreign keys) or, for orders, orders without lines.
var keyChecks = []struct{ what, sql string }{
	{"nations without their region", "select count(*) from nation where not exists (select 1 from region where r_regionkey = n_regionkey)"},
	{"suppliers without their nation", "select count(*) from supplier where not exists (select 1 from nation where n_nationkey = s_nationkey)"},
	{"customers without their nation", "select count(*) from customer where not exists (select 1 from nation where n_nationkey = c_nationkey)"},
	{"partsupp rows without their part or supplier", "select count(*) from partsupp where not exists (select 1 from part where p_partkey = ps_partkey) or not exists (select 1 from supplier where s_suppkey = ps_suppkey)"},
	{"orders without their customer", "select count(*) from orders where not exists (select 1 from customer where c_custkey = o_custkey)"},
	{"lineitems without their order", "select count(*) from lineitem where not exists (select 1 from orders where o_orderkey = l_orderkey)"},
	{"lineitems without their partsupp", "select count(*) from lineitem where not exists (select 1 from partsupp where ps_partkey = l_partkey and ps_suppkey = l_suppkey)"},
	{"orders without lineitems", "select count(*) from orders where not exists (select 1 from lineitem where l_orderkey = o_orderkey)"},
}

// checkKeys runs every key check, whatever the others found, and names
// each that failed or erred.
func checkKeys(ctx context.Context, conn *pgx.Conn) error {
	var bad []string
	for _, c := range keyChecks {
		var n int64
		if err := conn.QueryRow(ctx, c.sql).Scan(&n); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("tpch check: %s: %w", c.what, err)
			}
			bad = append(bad, fmt.Sprintf("%s: %v", c.what, err))
		} else if n != 0 {
			bad = append(bad, fmt.Sprintf("%d %s", n, c.what))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("tpch check: %d of %d key checks pass; %s", len(keyChecks)-len(bad), len(keyChecks), strings.Join(bad, "; "))
	}
	return nil
}

// checkAnswers runs the 22 queries with the validation parameters and
// compares each result with the scale's answer set (qgen.Check's
// tolerances), every query whatever the others did: the error names each
// that failed (a wrong answer) or erred (with its SQLSTATE) and counts
// those that passed; on success a note says how many matched and which
// ran in a Citus form. It refuses, as bad input, a scale without an
// answer set and data the refresh functions have changed.
func (w *Workload) checkAnswers(ctx context.Context, conn *pgx.Conn) error {
	if w.rf1Next != 1 || w.rf2Next != 1 {
		return &workload.InputError{Msg: fmt.Sprintf("check tpch --answers: refresh sets have changed the data (RF1 ran %d sets, RF2 %d): the answer set is for the data as loaded; init again first",
			w.rf1Next-1, w.rf2Next-1)}
	}
	want, ok := qgen.Answers(w.scale)
	if !ok {
		return &workload.InputError{Msg: fmt.Sprintf("check tpch --answers: no answer set for scale %g (there are answer sets for 0.01, 0.1 and 1 where pinned)", w.scale)}
	}
	var bad []string
	for n := 1; n <= qgen.NumQueries; n++ {
		got, err := textRows(ctx, conn, w.querySQL(qgen.Validation(n, w.scale)))
		if err == nil {
			if err = qgen.Check(n, got, want[n]); err != nil {
				bad = append(bad, fmt.Sprintf("q%d wrong answer: %v", n, err))
			}
		} else {
			if ctx.Err() != nil {
				return fmt.Errorf("tpch check --answers: q%d: %w", n, err)
			}
			bad = append(bad, fmt.Sprintf("q%d error: %v", n, err))
		}
	}
	return answersResult(bad, w.citus)
}

// answersResult is checkAnswers' outcome from the failures in query
// order.
func answersResult(bad []string, citus bool) error {
	if len(bad) > 0 {
		return fmt.Errorf("tpch check --answers: %d of %d queries pass; %s", qgen.NumQueries-len(bad), qgen.NumQueries, strings.Join(bad, "; "))
	}
	msg := fmt.Sprintf("%d of %d queries' answers match the answer set", qgen.NumQueries, qgen.NumQueries)
	if citus {
		msg += " (" + citusFormNames() + " in their Citus forms)"
	}
	return &workload.CheckNote{Err: errors.New(msg)}
}

// textRows runs sql over the simple protocol and returns its rows as
// PostgreSQL's text (NULL as qgen.Null).
func textRows(ctx context.Context, conn *pgx.Conn, sql string) ([][]string, error) {
	rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		raw := rows.RawValues()
		r := make([]string, len(raw))
		for i, v := range raw {
			if v == nil {
				r[i] = qgen.Null
			} else {
				r[i] = string(v)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Fingerprint returns each table's row count and a checksum of its rows
// as text (md5 of the rows' text in key order), for tests that pin the
// generated data.
func Fingerprint(ctx context.Context, conn *pgx.Conn) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range dbgen.Tables {
		pk := primaryKeys.Get()[t]
		var n int64
		var sum string
		err := conn.QueryRow(ctx, "select count(*), coalesce(md5(string_agg(x::text, '\n' order by "+pk+")), '') from "+t.String()+" x").Scan(&n, &sum)
		if err != nil {
			return nil, fmt.Errorf("fingerprint %s: %w", t, err)
		}
		out[t.String()] = strconv.FormatInt(n, 10) + " " + sum
	}
	return out, nil
}
