package sysbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// RowCountError is returned by Check when tables do not hold --table-size
// rows. That is expected after oltp_insert and oltp_delete runs (they add
// and remove rows); Expected says whether the workload checking was
// configured with one of those tests, and then Check returns it in a
// workload.CheckNote (the CLI shows it as a note).
type RowCountError struct {
	Tables   []string // "sbtest2 has 9998"
	Want     int
	Given    bool // Want is --table-size (not what was loaded or counted)
	Expected bool
}

func (e *RowCountError) Error() string {
	from := fmt.Sprintf("--table-size %d", e.Want)
	if !e.Given {
		from = fmt.Sprintf("the %d rows per table of the load", e.Want)
	}
	msg := fmt.Sprintf("sysbench check: rows differ from %s: %s", from, strings.Join(e.Tables, ", "))
	if e.Expected {
		msg += " (expected after oltp_insert and oltp_delete runs)"
	}
	return msg
}

// Check implements workload.Checker: every table sbtest1..N has the
// workload's table size in rows (after Prepare: --table-size, or the rows of
// sbtest1), a unique index on id (the primary key; with --secondary any
// index on id) and, unless --create-secondary=off, an index on k (k_N as
// sysbench names it). It only reads.
func (w *Workload) Check(ctx context.Context, conn pgtext.Querier) error {
	var q strings.Builder
	for n := 1; n <= w.tables; n++ {
		if n > 1 {
			q.WriteString(" union all ")
		}
		// the table, its rows, and whether indexes on id (unique) and on k exist
		fmt.Fprintf(&q, `select %d, (select count(*) from %s),
			exists (select from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
				where i.indrelid = '%[2]s'::regclass and i.indnatts = 1 and a.attname = 'id' and (i.indisunique or $1)),
			exists (select from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
				where i.indrelid = '%[2]s'::regclass and i.indnatts = 1 and a.attname = 'k')`, n, tableName(n))
	}
	rows, err := conn.Query(ctx, q.String(), w.secondary)
	if err != nil {
		return fmt.Errorf("sysbench check: %w", err)
	}
	defer rows.Close()
	var wrong []string
	for rows.Next() {
		var n int
		var count int64
		var idIndex, kIndex bool
		if err := rows.Scan(&n, &count, &idIndex, &kIndex); err != nil {
			return fmt.Errorf("sysbench check: %w", err)
		}
		name := tableName(n)
		switch {
		case !idIndex && w.secondary:
			return fmt.Errorf("sysbench check: %s has no index on id", name)
		case !idIndex:
			return fmt.Errorf("sysbench check: %s has no primary key on id (with --secondary: any index on id)", name)
		case !kIndex && w.createSecondary:
			return fmt.Errorf("sysbench check: %s has no index on k (k_%d; --create-secondary=off if it was made without)", name, n)
		}
		if count != int64(w.tableSize) {
			wrong = append(wrong, fmt.Sprintf("%s has %d", name, count))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sysbench check: %w", err)
	}
	if len(wrong) > 0 {
		// Without --table-size the size is what init loaded (or sbtest1's
		// rows): runs of oltp_insert and oltp_delete change the rows, so a
		// difference is a note unless --table-size asserts the rows.
		e := &RowCountError{Tables: wrong, Want: w.tableSize, Given: w.sizeGiven,
			Expected: w.test == TestInsert || w.test == TestDelete || !w.sizeGiven}
		if e.Expected {
			return &workload.CheckNote{Err: e}
		}
		return e
	}
	return nil
}
