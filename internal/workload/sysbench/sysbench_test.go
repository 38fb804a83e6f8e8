package sysbench

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

// newWorkload returns a workload for test (oltp_read_write when "") with
// args parsed and validated.
func newWorkload(t testing.TB, test string, args ...string) *Workload {
	t.Helper()
	w := New()
	var pos []string
	if test != "" {
		pos = []string{test}
	}
	if err := w.SetArgs(pos); err != nil {
		t.Fatal(err)
	}
	if err := w.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

var modes = map[string]pgx.QueryExecMode{
	"simple":   pgx.QueryExecModeSimpleProtocol,
	"extended": pgx.QueryExecModeExec,
	"prepared": pgx.QueryExecModeCacheStatement,
}

func TestArgsAndValidate(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		flags []string
		test  string
		err   string
	}{
		{nil, nil, TestReadWrite, ""},
		{[]string{"oltp_point_select"}, nil, TestPointSelect, ""},
		{[]string{"oltp_read_only.lua"}, nil, TestReadOnly, ""},
		{[]string{"oltp_nope"}, nil, "", `unknown test "oltp_nope" (available: ` + strings.Join(Tests, ", ") + ")"},
		{[]string{"a", "b"}, nil, "", "one test at most (got a b)"},
		{nil, []string{"--rand-type", "zipfian"}, "", "--rand-type zipfian is sysbench 1.1's, not 1.0's (choose uniform, special, gaussian, pareto)"},
		{nil, []string{"--tables", "0"}, "", "--tables must be at least 1 (got 0)"},
		{nil, []string{"--rand-spec-res", "100"}, "", "--rand-spec-res must be between 0 and 99 (got 100)"},
		{[]string{"select_random_points"}, []string{"--tables", "2"}, "", "select_random_points does not support --tables > 1 (it reads sbtest1 only)"},
		{[]string{"oltp_write_only"}, []string{"--skip-trx", "--index-updates", "0", "--non-index-updates=0", "--delete-inserts", "0"}, "",
			"oltp_write_only with these options runs no statement"},
		{nil, []string{"--skip-trx=on", "--auto-inc=off"}, TestReadWrite, ""},
	} {
		t.Run(strings.Join(append(tc.args, tc.flags...), " "), func(t *testing.T) {
			w := New()
			err := w.SetArgs(tc.args)
			if err == nil {
				if err = w.Flags().Parse(tc.flags); err != nil {
					t.Fatal(err)
				}
				err = w.Validate()
			}
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Fatalf("error = %v, want %q", err, tc.err)
			case tc.err == "" && w.TxTypes()[0] != tc.test:
				t.Fatalf("TxTypes = %v, want %s", w.TxTypes(), tc.test)
			}
		})
	}
	w := newWorkload(t, "", "--skip-trx=on")
	if !w.skipTrx || w.queriesPerEvent().String() != "18 (14 reads, 4 writes, 0 other)" {
		t.Errorf("--skip-trx=on: %v, queries %s", w.skipTrx, w.queriesPerEvent())
	}
	if q := newWorkload(t, "").queriesPerEvent().String(); q != "20 (14 reads, 4 writes, 2 other)" {
		t.Errorf("oltp_read_write queries = %s, want sysbench's 20 (14 reads, 4 writes, 2 other)", q)
	}
}

// TestDistributions checks the shapes of sysbench's distributions: the
// bounds, and for special (the default) that 75% of draws fall in the 1%
// of the range around its middle.
func TestDistributions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const a, b, n = 1, 100000, 200000
	for _, kind := range randTypes {
		d, err := newDistribution(kind, 12, 1, 75, 0.2)
		if err != nil {
			t.Fatal(err)
		}
		hot, low := 0, 0
		for range n {
			v := d.draw(rng, a, b)
			if v < a || v > b {
				t.Fatalf("%s: %d outside [%d, %d]", kind, v, a, b)
			}
			if v >= 49500 && v <= 50501 {
				hot++
			}
			if v <= 20000 {
				low++
			}
		}
		share, lowShare := float64(hot)/n, float64(low)/n
		switch kind {
		case randSpecial:
			// 75% uniform in the hot 1%, plus the bell's share of it
			if share < 0.75 || share > 0.80 {
				t.Errorf("special: %.3f of draws in the middle 1%%, want about 0.75-0.8", share)
			}
		case randUniform:
			if share < 0.007 || share > 0.013 || lowShare < 0.19 || lowShare > 0.21 {
				t.Errorf("uniform: %.4f in the middle 1%%, %.3f in the first 20%%", share, lowShare)
			}
		case randPareto:
			// h = 0.2: 80% of draws in the first 20% of the range
			if lowShare < 0.78 || lowShare > 0.82 {
				t.Errorf("pareto: %.3f of draws in the first 20%%, want 0.8", lowShare)
			}
		case randGaussian:
			if lowShare > 0.01 || share < 0.03 {
				t.Errorf("gaussian: %.4f in the first 20%%, %.3f in the middle 1%%", lowShare, share)
			}
		}
	}
}

func TestUniqueSeq(t *testing.T) {
	u := newUniqueSeq(42, 0, 1)
	seen := map[uint32]bool{}
	var whole []uint32
	for range 200000 {
		v := u.next()
		if seen[v] {
			t.Fatalf("%d drawn twice", v)
		}
		seen[v] = true
		whole = append(whole, v)
	}
	// Segments (--segment i/3) share the seed and take every third number
	// of the whole run's sequence: never the same id twice between them.
	segs := []*uniqueSeq{newUniqueSeq(42, 0, 3), newUniqueSeq(42, 1, 3), newUniqueSeq(42, 2, 3)}
	for k, v := range whole {
		if got := segs[k%3].next(); got != v {
			t.Fatalf("number %d: segment %d/3 drew %d, the whole run %d", k, k%3, got, v)
		}
	}
}

// TestValueFormat checks c and pad: groups of 11 digits joined by '-'.
func TestValueFormat(t *testing.T) {
	w := newWorkload(t, "", "--table-size", "30")
	var dst [][]any
	dst = w.Tables()[0].Rows.Fill(0, dst)
	if len(dst) != 30 {
		t.Fatalf("%d rows", len(dst))
	}
	c := regexp.MustCompile(`^[0-9]{11}(-[0-9]{11}){9}$`)
	pad := regexp.MustCompile(`^[0-9]{11}(-[0-9]{11}){4}$`)
	for i, r := range dst {
		if r[0] != int32(i+1) || r[1].(int32) < 1 || r[1].(int32) > 30 {
			t.Errorf("row %d: id %v k %v", i, r[0], r[1])
		}
		if !c.Match(r[2].([]byte)) || !pad.Match(r[3].([]byte)) {
			t.Errorf("row %d: c %q pad %q", i, r[2], r[3])
		}
	}
}

// TestFingerprint guards the determinism of the generated data: a change
// here changes what every sysbench database pgarena loads contains.
func TestFingerprint(t *testing.T) {
	w := newWorkload(t, "", "--tables", "2", "--table-size", "25000")
	w.SetSeed(7)
	h := sha256.New()
	var rows int64
	for _, tb := range w.Tables() {
		fmt.Fprintf(h, "%s %v\n", tb.Name, tb.Columns)
		var dst [][]any
		for i := 0; i < tb.Rows.N; i++ {
			dst = tb.Rows.Fill(i, dst)
			for _, r := range dst {
				fmt.Fprintf(h, "%d %d %s %s\n", r[0], r[1], r[2], r[3])
			}
			rows += int64(len(dst))
		}
	}
	if rows != 50000 {
		t.Errorf("rows = %d, want 50000", rows)
	}
	const want = "3d50e54056ab67f8743ae215e93f527a8712e5fd4342a00189788a2899856a88"
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("fingerprint = %s, want %s", got, want)
	}
}

// TestEveryTestEveryProtocol runs every test on a pgarena database under
// each protocol and checks the database afterwards.
func TestEveryTestEveryProtocol(t *testing.T) {
	for _, test := range Tests {
		for mode, qm := range modes {
			t.Run(test+"/"+mode, func(t *testing.T) {
				ctx := context.Background()
				dsn := loadertest.Loaded(t, newWorkload(t, "", "--tables", "2", "--table-size", "500"))
				conn := pgtest.Connect(t, dsn, qm)
				w := newWorkload(t, test)
				if err := w.Prepare(ctx, conn); err != nil {
					t.Fatal(err)
				}
				want := 2
				if strings.HasPrefix(test, "select_random") {
					want = 1
				}
				if w.tables != want || w.tableSize != 500 {
					t.Fatalf("Prepare: tables %d, table-size %d", w.tables, w.tableSize)
				}
				if err := w.ValidateRun(2); err != nil {
					t.Fatal(err)
				}
				for id := range 2 {
					wk := w.NewWorker(id, rand.New(rand.NewPCG(1, uint64(id))))
					for range 30 {
						if err := wk.Do(ctx, conn, wk.Next()); err != nil {
							t.Fatal(err)
						}
					}
				}
				if conn.PgConn().TxStatus() != 'I' {
					t.Fatal("transaction left open")
				}
				err := w.Check(ctx, conn)
				var rc *RowCountError
				if test == TestInsert || test == TestDelete {
					if !errors.As(err, &rc) || !errors.As(err, new(*workload.CheckNote)) {
						t.Fatalf("check after %s: %v, want a row count note", test, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("check: %v", err)
				}
			})
		}
	}
}
