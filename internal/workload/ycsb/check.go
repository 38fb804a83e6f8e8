package ycsb

import (
	"context"
	"fmt"
	"strings"

	"github.com/pgarena/pgarena/internal/pgtext"
)

// Check implements workload.Checker, after Prepare: usertable holds at
// least the loaded records (inserts only add), every key is "user" and a
// decimal number, no field is NULL, and the first and last keys of the
// load exist as keyName builds them (the load's insert order). The counts
// come from one statement, so from one snapshot.
func (w *Workload) Check(ctx context.Context, conn pgtext.Querier) error {
	records := w.loadedRec
	if records < 0 {
		records = int64(w.records) // not loaded by pgarena: --records
	}
	hashed := w.insertOrder == orderHashed
	first := string(keyName(nil, 0, hashed, w.zeroPadding))
	last := string(keyName(nil, records-1, hashed, w.zeroPadding))
	var nulls []string
	for _, c := range columns(w.fieldCount)[1:] {
		nulls = append(nulls, c+" is null")
	}
	var rows, badKeys, nullRows, ends int64
	err := conn.QueryRow(ctx, `select count(*),
		count(*) filter (where ycsb_key !~ '^user-?[0-9]+$'),
		count(*) filter (where `+strings.Join(nulls, " or ")+`),
		count(*) filter (where ycsb_key in ($1, $2))
		from usertable`, first, last).Scan(&rows, &badKeys, &nullRows, &ends)
	if err != nil {
		return fmt.Errorf("ycsb check: %w", err)
	}
	want := int64(2)
	if first == last {
		want = 1
	}
	switch {
	case rows < records:
		return fmt.Errorf("ycsb check: usertable has %d rows, want at least the %d loaded", rows, records)
	case badKeys > 0:
		return fmt.Errorf("ycsb check: %d keys of usertable are not \"user\" and a number", badKeys)
	case nullRows > 0:
		return fmt.Errorf("ycsb check: %d rows of usertable have a NULL field", nullRows)
	case ends != want:
		return fmt.Errorf("ycsb check: the first or last loaded key (%s, %s) is missing (%s insert order)", first, last, w.insertOrder)
	}
	return nil
}
