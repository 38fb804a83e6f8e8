// Package qgen is TPC-H's query side without a database: the 22 queries
// (Clause 2.4) as PostgreSQL SQL, their substitution parameters, the query
// order of each stream, and the comparison of a query's result with an
// answer set.
//
// Parameters. Validation(n, sf) substitutes the validation parameters of
// Clause 2.4.n.4 (qgen -d). Stream(s, seed, sf) draws the parameters of
// Clause 2.4.n.3 as TPC-H's qgen does: dbgen's Park-Miller generator
// (rnd.c), stream 0 seeded with the seed and stream n with its n-th
// successor, query n drawing from stream n in varsub.c's order, including
// Q16's and Q22's in-place shuffles. The tests check draws against query
// text that qgen printed for several seeds. Stream s draws what
// `qgen -r seed+s -p s` draws (one qgen run per stream, seeded with the
// base seed plus the stream number: pgarena's convention); the SQL is this
// package's PostgreSQL text, not qgen's templates.
//
// Order. Stream s runs the queries in the order of Appendix A's table
// (qgen's permute.h; Clause 5.3.5.4), row s mod 41; stream 0 is the power
// test's (Clause 5.3.3).
//
// Answers. Check compares rows with the tolerances of the spec's answer
// set rules (Clause 2.1.3.5, as the TPC tools' check_answers applies
// them per column); Answers returns pinned answer sets (see answers.go).
package qgen

import "fmt"

// Query is one of the 22 queries with its parameters substituted:
// PostgreSQL SQL text.
type Query struct {
	Number int
	SQL    string
	// Params are the substitution parameters in order (:1, :2, ...), as
	// substituted into SQL, for the run record.
	Params []string
}

// NumQueries is the number of TPC-H queries.
const NumQueries = 22

// Validation returns query n (1..22) with the spec's validation parameters
// (Clause 2.4.n.4). It panics on n outside 1..22 (a programming error).
func Validation(n int, sf float64) Query {
	mustQuery(n)
	return newQuery(n, validation(n, sf))
}

// Stream returns the 22 queries of query stream s (s = 0 is the power
// test's stream) in the spec's order for that stream (Appendix A, Clause
// 5.3.5.4), parameters drawn as qgen -r seed+s draws them.
func Stream(s int, seed int64, sf float64) []Query {
	st := newState(seed + int64(s))
	out := make([]Query, 0, NumQueries)
	for _, n := range Order(s) {
		out = append(out, newQuery(n, st.draw(n, sf)))
	}
	return out
}

// Order returns the query numbers of stream s in execution order
// (Appendix A; streams beyond 40 reuse the table from its start, as qgen's
// SEQUENCE does modulo 41).
func Order(s int) []int {
	if s < 0 {
		s = -s
	}
	row := permutation[s%len(permutation)]
	return append([]int(nil), row[:]...)
}

func newQuery(n int, p params) Query {
	return Query{Number: n, SQL: substitute(n, p), Params: append([]string(nil), p[1:]...)}
}

func mustQuery(n int) {
	if n < 1 || n > NumQueries {
		panic(fmt.Sprintf("qgen: no TPC-H query %d (1..22)", n))
	}
}
