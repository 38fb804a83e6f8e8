package sysbench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgarena/pgarena/internal/roundtrip"
)

// class is a kind of statement of oltp_common.lua's stmt_defs (and of the
// scripts that define their own).
type class int

const (
	clPointSelect class = iota
	clSimpleRange
	clSumRange
	clOrderRange
	clDistinctRange
	clIndexUpdate
	clNonIndexUpdate
	clDelete
	clInsert     // with the id (delete_inserts; oltp_insert without --auto-inc)
	clInsertAuto // without it (oltp_insert on pgsql with --auto-inc)
	clRandomPoints
	clRandomRanges
	numClasses
)

const (
	int4   = pgtype.Int4OID
	bpchar = pgtype.BPCharOID
)

// classDefs are sysbench's statements, verbatim but for the placeholders
// ($n for its ?), with the parameter types its pgsql driver prepares them
// with (sysbench INT: int4, CHAR: bpchar). %[1]d is the table number.
var classDefs = [numClasses]struct {
	label string
	sql   string
	types []uint32
}{
	clPointSelect:    {"point_selects", "SELECT c FROM sbtest%[1]d WHERE id=$1", []uint32{int4}},
	clSimpleRange:    {"simple_ranges", "SELECT c FROM sbtest%[1]d WHERE id BETWEEN $1 AND $2", []uint32{int4, int4}},
	clSumRange:       {"sum_ranges", "SELECT SUM(k) FROM sbtest%[1]d WHERE id BETWEEN $1 AND $2", []uint32{int4, int4}},
	clOrderRange:     {"order_ranges", "SELECT c FROM sbtest%[1]d WHERE id BETWEEN $1 AND $2 ORDER BY c", []uint32{int4, int4}},
	clDistinctRange:  {"distinct_ranges", "SELECT DISTINCT c FROM sbtest%[1]d WHERE id BETWEEN $1 AND $2 ORDER BY c", []uint32{int4, int4}},
	clIndexUpdate:    {"index_updates", "UPDATE sbtest%[1]d SET k=k+1 WHERE id=$1", []uint32{int4}},
	clNonIndexUpdate: {"non_index_updates", "UPDATE sbtest%[1]d SET c=$1 WHERE id=$2", []uint32{bpchar, int4}},
	clDelete:         {"deletes", "DELETE FROM sbtest%[1]d WHERE id=$1", []uint32{int4}},
	clInsert:         {"inserts", "INSERT INTO sbtest%[1]d (id, k, c, pad) VALUES ($1, $2, $3, $4)", []uint32{int4, int4, bpchar, bpchar}},
	clInsertAuto:     {"insert", "INSERT INTO sbtest%[1]d (k, c, pad) VALUES ($1, $2, $3)", []uint32{int4, bpchar, bpchar}},
	// select_random_points.lua and select_random_ranges.lua build theirs
	// from --random-points and --number-of-ranges: see randomPointsSQL.
	clRandomPoints: {"random_points", "", nil},
	clRandomRanges: {"random_ranges", "", nil},
}

// statement is one SQL statement on one table, ready for each protocol.
type statement struct {
	label string   // for error messages: "point_selects on sbtest3"
	name  string   // prepared statement name
	sql   string   // with $1..$n
	oids  []uint32 // parameter types
	// simple protocol: pieces of the text around the parameters,
	// pieces[0] param[refs[0]] pieces[1] ...; text parameters are quoted.
	pieces []string
	refs   []int
	// prepared on the worker's connection of this generation (0: never)
	gen uint64
	sd  *pgconn.StatementDescription // what preparing it there described
	// runs it there in one round trip (made on first use)
	lean *roundtrip.Prepared
}

func newStatement(label, name, sql string, oids []uint32) *statement {
	s := &statement{label: label, name: name, sql: sql, oids: oids}
	rest := sql
	var cur strings.Builder
	for {
		i := strings.IndexByte(rest, '$')
		if i < 0 {
			cur.WriteString(rest)
			break
		}
		j := i + 1
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(rest[i+1 : j])
		if err != nil || n < 1 || n > len(oids) {
			panic("sysbench: bad placeholder in " + sql)
		}
		cur.WriteString(rest[:i])
		if oids[n-1] == bpchar {
			cur.WriteByte('\'')
		}
		s.pieces = append(s.pieces, cur.String())
		cur.Reset()
		if oids[n-1] == bpchar {
			cur.WriteByte('\'')
		}
		s.refs = append(s.refs, n-1)
		rest = rest[j:]
	}
	s.pieces = append(s.pieces, cur.String())
	return s
}

// classStatement makes the statement of class c on table n.
func (w *Workload) classStatement(c class, n int) *statement {
	d := classDefs[c]
	sql, oids := fmt.Sprintf(d.sql, n), d.types
	switch c {
	case clRandomPoints:
		sql, oids = randomPointsSQL(w.randomPoints)
	case clRandomRanges:
		sql, oids = randomRangesSQL(w.numberOfRanges)
	}
	return newStatement(fmt.Sprintf("%s on %s", d.label, tableName(n)),
		fmt.Sprintf("pgarena_sb_%s_%d", d.label, n), sql, oids)
}

// randomPointsSQL is select_random_points.lua's statement (on sbtest1).
func randomPointsSQL(points int) (string, []uint32) {
	var b strings.Builder
	oids := make([]uint32, points)
	b.WriteString("SELECT id, k, c, pad FROM sbtest1 WHERE k IN (")
	for i := range oids {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", i+1)
		oids[i] = int4
	}
	b.WriteString(")")
	return b.String(), oids
}

// randomRangesSQL is select_random_ranges.lua's statement (on sbtest1).
func randomRangesSQL(ranges int) (string, []uint32) {
	var b strings.Builder
	oids := make([]uint32, 2*ranges)
	b.WriteString("SELECT count(k) FROM sbtest1 WHERE ")
	for i := 0; i < ranges; i++ {
		if i > 0 {
			b.WriteString(" OR ")
		}
		fmt.Fprintf(&b, "k BETWEEN $%d AND $%d", 2*i+1, 2*i+2)
		oids[2*i], oids[2*i+1] = int4, int4
	}
	return b.String(), oids
}
