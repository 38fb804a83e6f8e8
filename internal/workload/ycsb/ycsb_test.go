package ycsb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

func TestRegistered(t *testing.T) {
	if Meta.Name != "ycsb" {
		t.Fatalf("Meta.Name = %q", Meta.Name)
	}
	if _, ok := Meta.New().(workload.Flagser); !ok {
		t.Error("ycsb has no flags")
	}
}

// TestFingerprint guards the determinism of the generated data: a change
// here changes what every ycsb database contains. It hashes every batch of
// 10000 records and checks that a batch made again into reused buffers,
// out of order, is the same.
func TestFingerprint(t *testing.T) {
	w := newWorkload(t, "--records", "10000")
	h := sha256.New()
	tb := w.Tables()[0]
	fmt.Fprintf(h, "%s %v %d %d %q %q\n", tb.Name, tb.Columns, tb.Rows.N, tb.Rows.Rows, tb.Create, tb.PostLoad)
	var dst [][]any
	var rows int
	for i := tb.Rows.N - 1; i >= 0; i-- {
		dst = tb.Rows.Fill(i, dst)
		h.Write(encodeRows(dst))
		rows += len(dst)
	}
	if rows != 10000 {
		t.Errorf("%d rows, want 10000", rows)
	}
	first := encodeRows(tb.Rows.Fill(0, nil))
	if again := encodeRows(tb.Rows.Fill(0, dst)); !bytes.Equal(again, first) {
		t.Error("batch 0 differs when generated again")
	}
	r := tb.Rows.Fill(0, nil)[0]
	if r[0] != "user6284781860667377211" || len(r) != 11 || len(r[1].(string)) != 100 {
		t.Errorf("first row: key %v, %d columns, field0 %q", r[0], len(r), r[1])
	}
	const want = "5b6db06a47e2b552cb92f7a5238a6d86c1dcea0040116e6c6db62828b97a5084"
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("fingerprint = %s, want %s", got, want)
	}
	// another seed, other values, same keys
	w.SetSeed(2)
	r2 := w.Tables()[0].Rows.Fill(0, nil)[0]
	if r2[0] != r[0] || r2[1] == r[1] {
		t.Errorf("seed 2: key %v field0 %v, seed 1: %v %v", r2[0], r2[1], r[0], r[1])
	}
}

func encodeRows(rows [][]any) []byte {
	var b []byte
	for _, r := range rows {
		for _, v := range r {
			b = append(b, v.(string)...)
			b = append(b, '|')
		}
		b = append(b, '\n')
	}
	return b
}

func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestRunEveryLetter loads 3000 records and runs each core workload for a
// moment with 3 clients: nothing fails, each letter runs its operations,
// and the rows grow by exactly the committed inserts.
func TestRunEveryLetter(t *testing.T) {
	ctx := context.Background()
	w := newWorkload(t, "--records", "3000")
	dsn := loadertest.Loaded(t, w)
	conn := connect(t, dsn)
	rows := int64(3000)
	for _, letter := range []string{"a", "b", "c", "d", "e", "f"} {
		w := newWorkload(t, "--workload", letter)
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if w.base != rows || w.records != 3000 {
			t.Fatalf("%s: Prepare read %d rows, %d records; want %d, 3000", letter, w.base, w.records, rows)
		}
		committed := runWorkload(t, w, dsn)
		for _, tx := range w.TxTypes() {
			if committed[tx] == 0 {
				t.Errorf("%s: no %s committed (%v)", letter, tx, committed)
			}
		}
		rows += committed["insert"]
		if err := conn.QueryRow(ctx, "select count(*) from usertable").Scan(&w.base); err != nil || w.base != rows {
			t.Errorf("%s: %d rows (%v), want %d: inserts committed must be the rows added", letter, w.base, err, rows)
		}
		if got := w.keys.count(); got != rows {
			t.Errorf("%s: readable key space %d, want %d", letter, got, rows)
		}
		if err := w.Check(ctx, conn); err != nil {
			t.Errorf("%s: %v", letter, err)
		}
	}
}

// runWorkload runs w with 3 clients, 100 transactions each, and returns
// the committed count per type; a failure fails the test. The callers
// check that rare types (5% of a mix) committed: a run of fixed length
// (not of fixed time, where a loaded host ran 34 operations in 600 ms and
// missed workload e's inserts 17% of the time) from a fixed seed makes
// 300 draws, of which none is a 5% type with probability 0.95^300 < 1e-6.
func runWorkload(t *testing.T, w workload.Workload, dsn string) map[string]int64 {
	t.Helper()
	rec := metrics.NewRecorder(w.TxTypes(), time.Now())
	var acc metrics.Accumulator
	_, err := driver.Run(context.Background(), w, func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) },
		driver.Config{Clients: 3, Transactions: 100, Seed: 1, Tick: 100 * time.Millisecond, OnInterval: acc.Add}, rec)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var sum metrics.Summary
	acc.Fill(&sum)
	if sum.Failed > 0 {
		t.Fatalf("%d failed: %v", sum.Failed, sum.Errors)
	}
	out := map[string]int64{}
	for _, ts := range sum.Tx {
		out[ts.Name] = ts.Transactions
	}
	return out
}

// TestFailedInsertDoesNotExtend: an insert that fails leaves the readable
// key space as it was, and the next insert takes its key again.
func TestFailedInsertDoesNotExtend(t *testing.T) {
	ctx := context.Background()
	w := newWorkload(t, "--records", "500", "--workload", "d", "--insert-order", "ordered")
	dsn := loadertest.Loaded(t, w)
	conn := connect(t, dsn)
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	c := w.NewWorker(0, rand.New(rand.NewPCG(1, 1))).(*worker)
	insert := workload.TxType(1) // d: read, insert
	if w.TxTypes()[insert] != "insert" {
		t.Fatalf("types %v", w.TxTypes())
	}
	if _, err := conn.Exec(ctx, "set default_transaction_read_only = on"); err != nil {
		t.Fatal(err)
	}
	err := c.Do(ctx, conn, insert)
	if err == nil || !strings.Contains(err.Error(), "insert user500") {
		t.Fatalf("insert on a read-only session: %v", err)
	}
	if got := w.keys.count(); got != 500 {
		t.Errorf("readable %d after a failed insert, want 500", got)
	}
	if _, err := conn.Exec(ctx, "set default_transaction_read_only = off"); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, conn, insert); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn.QueryRow(ctx, "select count(*) from usertable where ycsb_key = 'user500'").Scan(&n); err != nil || n != 1 {
		t.Errorf("user500: %d rows (%v), want the failed key inserted by the next insert", n, err)
	}
	if got := w.keys.count(); got != 501 {
		t.Errorf("readable %d, want 501", got)
	}
	// an insert whose key exists (an earlier attempt committed) fails but
	// acknowledges the key
	if _, err := conn.Exec(ctx, "insert into usertable (ycsb_key) select 'user501'"); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, conn, insert); err == nil || !strings.Contains(err.Error(), "23505") {
		t.Errorf("insert of an existing key: %v", err)
	}
	if got := w.keys.count(); got != 502 {
		t.Errorf("readable %d after a duplicate key, want 502", got)
	}
}

// TestPrepare: a run takes records, field count, field length and insert
// order from the database, with a note for flags that disagree; a missing
// table is named.
func TestPrepare(t *testing.T) {
	ctx := context.Background()
	w := newWorkload(t, "--records", "300", "--field-count", "3", "--field-length", "20", "--insert-order", "ordered")
	dsn := loadertest.Loaded(t, w)
	conn := connect(t, dsn)
	r := newWorkload(t, "--records", "999", "--workload", "f", "--write-all-fields")
	if err := r.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if r.records != 300 || r.fieldCount != 3 || r.fieldLength != 20 || r.insertOrder != orderOrdered {
		t.Errorf("prepared: records %d fields %d length %d order %s", r.records, r.fieldCount, r.fieldLength, r.insertOrder)
	}
	if note := r.Params()["note"]; note != "--records 999 ignored: the database has 300" {
		t.Errorf("note %q", note)
	}
	committed := runWorkload(t, r, dsn)
	if committed["read_modify_write"] == 0 {
		t.Errorf("no read-modify-write committed: %v", committed)
	}
	var length int
	if err := conn.QueryRow(ctx, "select max(length(field2)) from usertable").Scan(&length); err != nil || length != 20 {
		t.Errorf("field length after updates %d (%v), want 20", length, err)
	}
	if err := r.Check(ctx, conn); err != nil {
		t.Error(err)
	}
	// a NULL field fails the check
	if _, err := conn.Exec(ctx, "update usertable set field1 = null where ycsb_key = 'user7'"); err != nil {
		t.Fatal(err)
	}
	if err := r.Check(ctx, conn); err == nil || !strings.Contains(err.Error(), "1 rows of usertable have a NULL field") {
		t.Errorf("check with a NULL field: %v", err)
	}

	empty := connect(t, pgtest.DSN(t))
	if err := newWorkload(t).Prepare(ctx, empty); err == nil || !strings.Contains(err.Error(), "run `pgarena init ycsb` first") {
		t.Errorf("Prepare on an empty database: %v", err)
	}
}
