package ycsb

import (
	"context"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/workload"
)

// TestDataIntegrity: a load with --data-integrity holds YCSB's
// deterministic values; runs that read, update, insert and
// read-modify-write with --data-integrity verify every read and fail
// nothing; a value changed behind the workload's back fails the read
// that finds it, naming key and field; a run asking for it on a load
// without it is refused.
func TestDataIntegrity(t *testing.T) {
	ctx := context.Background()
	dsn := loadertest.Loaded(t, newWorkload(t, "--records", "1000", "--data-integrity", "--field-count", "4", "--field-length", "50"))
	conn := connect(t, dsn)
	var v string
	if err := conn.QueryRow(ctx, "select field2 from usertable where ycsb_key = 'user6284781860667377211'").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if want := string(appendIntegrityValue(nil, "user6284781860667377211", 2, 50)); v != want {
		t.Errorf("field2 of key 0 = %q, want %q", v, want)
	}
	for _, args := range [][]string{
		{"--workload", "a", "--write-all-fields"},
		{"--workload", "d"},
		{"--workload", "f", "--read-all-fields=false"},
	} {
		w := newWorkload(t, append(args, "--data-integrity")...)
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if w.fieldLength != 50 || w.fieldCount != 4 {
			t.Fatalf("prepared field length %d count %d", w.fieldLength, w.fieldCount)
		}
		committed := runWorkload(t, w, dsn) // fails the test on any failure
		if committed["read"] == 0 {
			t.Errorf("%v: no read committed: %v", args, committed)
		}
	}
	// a value that is not the deterministic one
	w := newWorkload(t, "--workload", "c", "--data-integrity", "--request-distribution", "sequential")
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "update usertable set field3 = 'tampered' where ycsb_key = 'user6284781860667377211'"); err != nil {
		t.Fatal(err)
	}
	c := w.NewWorker(0, newRNG()).(*worker)
	err := c.Do(ctx, conn, workload.TxType(0)) // key number 0 first
	if err == nil || !strings.Contains(err.Error(), `read user6284781860667377211: data integrity: field3 of user6284781860667377211 is "tampered", want "user6284781860667377211:field3:`) {
		t.Errorf("read of a changed value: %v", err)
	}
	if _, err := conn.Exec(ctx, "update usertable set field3 = null where ycsb_key = 'user6284781860667377211'"); err != nil {
		t.Fatal(err)
	}
	w.keys.sequential.Store(0)
	if err := c.Do(ctx, conn, workload.TxType(0)); err == nil || !strings.Contains(err.Error(), "field3 of user6284781860667377211 is NULL") {
		t.Errorf("read of a NULL value: %v", err)
	}

	plain := connect(t, loadertest.Loaded(t, newWorkload(t, "--records", "100")))
	err = newWorkload(t, "--data-integrity").Prepare(ctx, plain)
	if err == nil || !strings.Contains(err.Error(), "--data-integrity: the database was loaded without it") {
		t.Errorf("Prepare --data-integrity on a load without it: %v", err)
	}
}

// TestFieldLengthDistributionRun: a load with uniform field lengths has
// values of 5..40 characters, a run takes the distribution from the load
// (a flag that differs gets a note), and its updates and inserts write
// lengths of the same range.
func TestFieldLengthDistributionRun(t *testing.T) {
	ctx := context.Background()
	dsn := loadertest.Loaded(t, newWorkload(t, "--records", "2000", "--field-length-distribution", "uniform",
		"--min-field-length", "5", "--field-length", "40", "--field-count", "3", "--insert-order", "ordered", "--zero-padding", "12"))
	conn := connect(t, dsn)
	lengths := func() (lo, hi, distinct int) {
		t.Helper()
		err := conn.QueryRow(ctx, `select min(l), max(l), count(distinct l) from
			(select length(field0) l from usertable union all select length(field2) from usertable) x`).Scan(&lo, &hi, &distinct)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if lo, hi, n := lengths(); lo != 5 || hi != 40 || n != 36 {
		t.Errorf("loaded lengths %d..%d, %d distinct, want 5..40, 36", lo, hi, n)
	}
	var key string
	if err := conn.QueryRow(ctx, "select min(ycsb_key) from usertable").Scan(&key); err != nil || key != "user000000000000" {
		t.Errorf("first key %q (%v), want user000000000000", key, err)
	}
	w := newWorkload(t, "--workload", "a", "--write-all-fields", "--insert-proportion", "0.2", "--update-proportion", "0.3",
		"--field-length-distribution", "zipfian")
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if w.lengthDist != lengthUniform || w.minFieldLength != 5 || w.fieldLength != 40 || w.zeroPadding != 12 {
		t.Errorf("prepared: %s %d..%d padding %d", w.lengthDist, w.minFieldLength, w.fieldLength, w.zeroPadding)
	}
	if note := w.Params()["note"]; note != "--field-length-distribution zipfian ignored: the database was loaded uniform" {
		t.Errorf("note %q", note)
	}
	if _, err := conn.Exec(ctx, "update usertable set field0 = '', field2 = ''"); err != nil {
		t.Fatal(err)
	}
	committed := runWorkload(t, w, dsn)
	if committed["insert"] == 0 || committed["update"] == 0 {
		t.Fatalf("committed %v", committed)
	}
	var written, short int64
	err := conn.QueryRow(ctx, `select count(*) filter (where field0 <> ''), count(*) filter (where field0 <> '' and length(field0) not between 5 and 40)
		from usertable`).Scan(&written, &short)
	if err != nil || written < committed["insert"] || short != 0 {
		t.Errorf("%d values written by the run (%v), %d outside 5..40", written, err, short)
	}
	var padded int64
	if err := conn.QueryRow(ctx, "select count(*) from usertable where ycsb_key ~ '^user[0-9]{12}$'").Scan(&padded); err != nil || padded != 2000+committed["insert"] {
		t.Errorf("%d keys padded to 12 digits (%v), want %d", padded, err, 2000+committed["insert"])
	}
	if err := w.Check(ctx, conn); err != nil {
		t.Error(err)
	}
}
