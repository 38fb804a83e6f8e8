package tpcc

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/randgen"
	"github.com/pgarena/pgarena/internal/workload"
)

// newWorkload returns a tpcc workload with args parsed and validated.
func newWorkload(t testing.TB, args ...string) *Workload {
	t.Helper()
	return loadertest.Configured(t, New(), args...)
}

func table(t *testing.T, w *Workload, name string) workload.Table {
	t.Helper()
	for _, tb := range w.Tables() {
		if tb.Name == name {
			return tb
		}
	}
	t.Fatalf("no table %s", name)
	return workload.Table{}
}

func TestRegistered(t *testing.T) {
	if Meta.Name != "tpcc" {
		t.Fatalf("Meta.Name = %q", Meta.Name)
	}
	if got := Meta.New().TxTypes(); !reflect.DeepEqual(got, []string{"new_order", "payment", "order_status", "delivery", "stock_level"}) {
		t.Errorf("TxTypes = %v", got)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{nil, ""},
		{[]string{"--warehouses", "3", "--all-warehouses"}, ""},
		{[]string{"--warehouses", "0"}, "warehouses must be at least 1 (got 0)"},
		{[]string{"-w", "-2"}, "warehouses must be at least 1 (got -2)"},
	} {
		w := New()
		if err := w.Flags().Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := w.Validate()
		if (tc.err == "" && err != nil) || (tc.err != "" && (err == nil || err.Error() != tc.err)) {
			t.Errorf("%v: Validate = %v, want %q", tc.args, err, tc.err)
		}
	}
}

// TestConstants checks the C constants' ranges and the delta rule of
// clause 2.1.6.1 for many seeds.
func TestConstants(t *testing.T) {
	for seed := uint64(0); seed < 2000; seed++ {
		c := constantsFor(seed)
		if c.cLastLoad < 0 || c.cLastLoad > 255 || c.cLastRun < 0 || c.cLastRun > 255 ||
			c.cID < 0 || c.cID > 1023 || c.cOLIID < 0 || c.cOLIID > 8191 {
			t.Fatalf("seed %d: constants out of range: %+v", seed, c)
		}
		if !validDelta(c.cLastLoad, c.cLastRun) {
			t.Fatalf("seed %d: C_LAST load %d, run %d break the delta rule", seed, c.cLastLoad, c.cLastRun)
		}
	}
	for _, tc := range []struct {
		load, run int64
		ok        bool
	}{{0, 65, true}, {0, 64, false}, {200, 81, true}, {200, 80, false}, {10, 106, false}, {10, 122, false}, {10, 121, true}} {
		if validDelta(tc.load, tc.run) != tc.ok {
			t.Errorf("validDelta(%d, %d) = %v", tc.load, tc.run, !tc.ok)
		}
	}
	if p := New().Params(); p["c_last_load"] == p["c_last_run"] || p["warehouses"] != "10" {
		t.Errorf("Params = %v", p)
	}
}

// TestNURand checks NURand(255, 0, 999) over the last-name numbers: every
// value in range, and non-uniform (the most frequent value far above the
// mean).
func TestNURand(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var counts [1000]int
	const n = 200000
	for range n {
		v := randgen.NURand(rng, 255, 0, 999, 123)
		if v < 0 || v > 999 {
			t.Fatalf("NURand = %d", v)
		}
		counts[v]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	if mean := n / 1000; top < 3*mean {
		t.Errorf("most frequent last name drawn %d times, mean %d: not skewed", top, mean)
	}
}

func TestLastName(t *testing.T) {
	for n, want := range map[int64]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING", 40: "BARPRESBAR"} {
		if got := lastName(n); got != want {
			t.Errorf("lastName(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestInitialData checks batches against clause 4.3.3.1.
func TestInitialData(t *testing.T) {
	w := newWorkload(t, "--warehouses", "2")
	// warehouse 2, district 4 is batch 13
	const b = 13
	cust := table(t, w, "customer").Rows.Fill(b, nil)
	if len(cust) != 3000 {
		t.Fatalf("customers = %d", len(cust))
	}
	bc := 0
	for i, r := range cust {
		if r[0] != int32(i+1) || r[1] != int16(4) || r[2] != int32(2) {
			t.Fatalf("customer key %v", r[:3])
		}
		if i < 1000 && r[5] != lastName(int64(i)) {
			t.Fatalf("customer %d last name %v", i+1, r[5])
		}
		if r[13] == "BC" {
			bc++
		}
		if n := len(r[20].(string)); n < 300 || n > 500 {
			t.Fatalf("c_data length %d", n)
		}
	}
	if bc < 200 || bc > 400 {
		t.Errorf("%d of 3000 customers with bad credit, want about 10%%", bc)
	}
	orders := table(t, w, "orders").Rows.Fill(b, nil)
	seen := map[int32]bool{}
	olSum := 0
	for i, r := range orders {
		seen[r[3].(int32)] = true
		if (i+1 < 2101) != (r[4] != nil) {
			t.Fatalf("order %d carrier %v", i+1, r[4])
		}
		olSum += int(r[5].(int16))
	}
	if len(orders) != 3000 || len(seen) != 3000 {
		t.Errorf("orders %d with %d distinct customers, want 3000 and 3000", len(orders), len(seen))
	}
	lines := table(t, w, "order_line").Rows.Fill(b, nil)
	if len(lines) != olSum {
		t.Errorf("order lines %d, sum(o_ol_cnt) %d", len(lines), olSum)
	}
	for _, r := range lines {
		undelivered := r[2].(int32) >= 2101
		if undelivered != (r[5] == nil) || (!undelivered && r[6].(pgtype.Numeric).Int.Sign() != 0) {
			t.Fatalf("order line %v", r)
		}
	}
	no := table(t, w, "new_order").Rows.Fill(b, nil)
	if len(no) != 900 || no[0][2] != int32(2101) || no[899][2] != int32(3000) {
		t.Errorf("new orders %d, first %v", len(no), no[0])
	}
	orig := 0
	items := table(t, w, "item").Rows
	for i := range items.N {
		for _, r := range items.Fill(i, nil) {
			if strings.Contains(r[4].(string), "ORIGINAL") {
				orig++
			}
		}
	}
	if orig < 9000 || orig > 11000 {
		t.Errorf("%d of 100000 items ORIGINAL, want about 10%%", orig)
	}
}

// TestFingerprint guards the determinism of the generated data: a change
// here changes what every tpcc database contains. It hashes the first,
// middle and last batch of every table for 2 warehouses (all of them
// would take long under -race), and checks that a batch generated again
// into reused buffers, out of order, is the same.
func TestFingerprint(t *testing.T) {
	w := newWorkload(t, "--warehouses", "2")
	h := sha256.New()
	for _, tb := range w.Tables() {
		fmt.Fprintf(h, "%s %v %d %d\n", tb.Name, tb.Columns, tb.Rows.N, tb.Rows.Rows)
		var dst [][]any
		for _, i := range []int{0, tb.Rows.N / 2, tb.Rows.N - 1} {
			dst = tb.Rows.Fill(i, dst)
			h.Write(encodeRows(t, dst))
		}
		first := encodeRows(t, tb.Rows.Fill(0, nil))
		if again := encodeRows(t, tb.Rows.Fill(0, dst)); !bytes.Equal(again, first) {
			t.Errorf("%s: batch 0 differs when generated again", tb.Name)
		}
	}
	const want = "0610ce8ad51a405180ab60c752946a53b7dd789011425a1c884abdb840397c1f"
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("fingerprint = %s, want %s", got, want)
	}
}

// encodeRows writes rows as text, one line each, for hashing (fmt is too
// slow under -race).
func encodeRows(t *testing.T, rows [][]any) []byte {
	var b []byte
	for _, r := range rows {
		for _, v := range r {
			switch v := v.(type) {
			case nil:
				b = append(b, "NULL"...)
			case int16:
				b = strconv.AppendInt(b, int64(v), 10)
			case int32:
				b = strconv.AppendInt(b, int64(v), 10)
			case string:
				b = strconv.AppendQuote(b, v)
			case pgtype.Numeric:
				b = v.Int.Append(b, 10)
				b = append(b, 'e')
				b = strconv.AppendInt(b, int64(v.Exp), 10)
			case time.Time:
				b = v.AppendFormat(b, time.RFC3339Nano)
			default:
				t.Fatalf("unexpected %T in a row", v)
			}
			b = append(b, '|')
		}
		b = append(b, '\n')
	}
	return b
}

// validDelta reports whether run and load C_LAST constants satisfy clause
// 2.1.6.1.
func validDelta(load, run int64) bool {
	d := run - load
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}
