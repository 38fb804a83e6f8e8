package qgen

import "github.com/pgarena/pgarena/internal/lazy"

// Citus forms. On a Citus coordinator with lineitem and orders
// hash-distributed by order key and the other six tables reference tables
// (tpch's layout there), Citus 13 runs 19 of the 22 queries as written.
// Three correlate a subquery over a distributed table with a column that
// is not its distribution column, which Citus refuses ("complex joins are
// only supported when all distributed tables are co-located and joined on
// their distribution columns"; "correlated subqueries are not supported
// when the FROM clause contains a reference table"). For those, CitusSQL
// gives a form that returns the same rows on any database:
//
//   - Q17: the correlated average per part becomes a derived table of
//     averages grouped by part key, joined on it (decorrelation: a part
//     without lineitems contributes no row either way). The derived table
//     is restricted to the brand and container the outer query keeps.
//   - Q20: the correlated half-sum per (part, supplier) becomes a derived
//     table grouped by both keys, joined on them; a partsupp row without
//     lineitems in the year has a NULL sum in the original (ps_availqty >
//     NULL is not true) and no joined row here: both drop it. The derived
//     table is restricted to the parts the outer IN keeps.
//   - Q22: NOT EXISTS (orders of the customer) becomes an anti-join:
//     customer LEFT JOIN the distinct customer keys of orders, keeping
//     the rows without a match; the same rows since o_custkey is NOT NULL
//     (Clause 1.4.1 declares every column so). Not NOT IN (subquery):
//     once the keys outgrow work_mem PostgreSQL rescans them per
//     customer (over 5 minutes at SF 1).
//
// TPC-H admits query text other than Clause 2.4's only as the minor
// modifications of Clause 2.2.3.3 or the approved variants of Appendix B
// (Clause 2.2.4); these rewrites are neither, so a run that uses them is
// TPC-H-derived (as every pgarena figure is: not audited) and its record
// says which queries ran in a Citus form. The validation answers of
// Clause 2.4.n.4 (check tpch --answers) show the forms equal.
var citusTemplates = lazy.Value[map[int]string]{New: buildCitusTemplates}

func buildCitusTemplates() map[int]string {
	return map[int]string{
		17: `select
	sum(l_extendedprice) / 7.0 as avg_yearly
from
	lineitem,
	part,
	(
		select
			l_partkey as agg_partkey,
			0.2 * avg(l_quantity) as avg_quantity
		from
			lineitem,
			part
		where
			p_partkey = l_partkey
			and p_brand = ':1'
			and p_container = ':2'
		group by
			l_partkey
	) as part_avg
where
	p_partkey = l_partkey
	and agg_partkey = l_partkey
	and p_brand = ':1'
	and p_container = ':2'
	and l_quantity < avg_quantity`,

		20: `select
	s_name,
	s_address
from
	supplier,
	nation
where
	s_suppkey in (
		select
			ps_suppkey
		from
			partsupp,
			(
				select
					l_partkey as agg_partkey,
					l_suppkey as agg_suppkey,
					0.5 * sum(l_quantity) as agg_quantity
				from
					lineitem
				where
					l_shipdate >= date ':2'
					and l_shipdate < date ':2' + interval '1 year'
					and l_partkey in (
						select
							p_partkey
						from
							part
						where
							p_name like ':1%'
					)
				group by
					l_partkey,
					l_suppkey
			) as agg_lineitem
		where
			agg_partkey = ps_partkey
			and agg_suppkey = ps_suppkey
			and ps_partkey in (
				select
					p_partkey
				from
					part
				where
					p_name like ':1%'
			)
			and ps_availqty > agg_quantity
	)
	and s_nationkey = n_nationkey
	and n_name = ':3'
order by
	s_name`,

		22: `select
	cntrycode,
	count(*) as numcust,
	sum(c_acctbal) as totacctbal
from
	(
		select
			substring(c_phone from 1 for 2) as cntrycode,
			c_acctbal
		from
			customer
			left join (
				select distinct
					o_custkey
				from
					orders
			) as cust_orders on o_custkey = c_custkey
		where
			substring(c_phone from 1 for 2) in
				(':1', ':2', ':3', ':4', ':5', ':6', ':7')
			and c_acctbal > (
				select
					avg(c_acctbal)
				from
					customer
				where
					c_acctbal > 0.00
					and substring(c_phone from 1 for 2) in
						(':1', ':2', ':3', ':4', ':5', ':6', ':7')
			)
			and o_custkey is null
	) as custsale
group by
	cntrycode
order by
	cntrycode`,
	}
}

// CitusSQL returns q's Citus form (see citusTemplates) with q's
// parameters, and true; q.SQL and false for a query Citus runs as written.
func CitusSQL(q Query) (string, bool) {
	t, ok := citusTemplates.Get()[q.Number]
	if !ok {
		return q.SQL, false
	}
	p := append(params{""}, q.Params...)
	return substituteTemplate(t, p), true
}

// CitusForms are the numbers of the queries CitusSQL rewrites.
func CitusForms() []int { return []int{17, 20, 22} }
