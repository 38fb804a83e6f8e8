package ycsb

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/workload"
)

var _ workload.Segmenter = (*Workload)(nil)

// TestKeySpaceSegments: three segments over the same 100 rows insert
// disjoint key numbers (each its stripe above the rows), and each reads
// the rows and its own contiguously acknowledged inserts only.
func TestKeySpaceSegments(t *testing.T) {
	const rows, segs = 100, 3
	seen := map[int64]int{}
	for seg := range segs {
		k := newKeySpace(rows, seg, segs)
		for x := range int64(rows) {
			if got := k.keynum(x); got != x {
				t.Fatalf("segment %d: index %d is key %d, want the loaded key %d", seg, x, got, x)
			}
		}
		var took []int64
		for range 10 {
			x := k.take()
			took = append(took, x)
			key := k.keynum(x)
			if key < rows || (key-rows)%segs != int64(seg) {
				t.Fatalf("segment %d inserts key %d, outside its stripe", seg, key)
			}
			if other, dup := seen[key]; dup {
				t.Fatalf("key %d inserted by segments %d and %d", key, other, seg)
			}
			seen[key] = seg
		}
		if want := int64(rows + seg); k.keynum(took[0]) != want {
			t.Errorf("segment %d: first insert key %d, want %d", seg, k.keynum(took[0]), want)
		}
		// acknowledge all but the third: the readable space stops there
		k.failed(took[2])
		for i, x := range took {
			if i != 2 {
				k.done(x)
			}
		}
		if k.count() != rows+2 {
			t.Errorf("segment %d: readable %d with the third insert failed, want %d", seg, k.count(), rows+2)
		}
		if again := k.take(); again != took[2] {
			t.Errorf("segment %d: took %d, want the failed %d again", seg, again, took[2])
		}
		k.done(took[2])
		if k.count() != rows+10 {
			t.Errorf("segment %d: readable %d, want %d", seg, k.count(), rows+10)
		}
		if got, want := k.keynum(k.count()-1), int64(rows+9*segs+seg); got != want {
			t.Errorf("segment %d: newest readable key %d, want %d", seg, got, want)
		}
	}
	if len(seen) != segs*10 {
		t.Errorf("%d distinct keys inserted, want %d", len(seen), segs*10)
	}
}

// TestSegmentDraws: every request distribution of segment 1 of 3 draws
// only the loaded rows and the segment's own acknowledged inserts, and
// latest favours its newest insert.
func TestSegmentDraws(t *testing.T) {
	const rows = 1000
	for _, dist := range []string{distUniform, distZipfian, distLatest, distHotspot} {
		w := newWorkload(t, "--workload", "d", "--records", "1000", "--request-distribution", dist)
		w.SetSegment(1, 3)
		c := w.NewWorker(0, newRNG()).(*worker)
		own := map[int64]bool{}
		for range 50 {
			x := c.keys.take()
			c.keys.done(x)
			own[c.keys.keynum(x)] = true
		}
		newest := int64(rows + 49*3 + 1)
		if !own[newest] || own[rows] || own[rows+2] {
			t.Fatalf("%s: segment 1 of 3 inserted %v", dist, own)
		}
		hits := map[int64]int{}
		for range draws / 4 {
			k := c.nextKey()
			if k < 0 || (k >= rows && !own[k]) {
				t.Fatalf("%s: drew key %d, neither loaded nor inserted by this segment", dist, k)
			}
			hits[k]++
		}
		if dist == distLatest && hits[newest] < draws/4/10 {
			t.Errorf("latest: newest own key %d drawn %d times of %d", newest, hits[newest], draws/4)
		}
	}
}

// TestSegmentsInsertTogether: two ycsb instances run as segments 0/2 and
// 1/2 of workload d against the same loaded table at once: no insert
// collides, every read finds its row, and the table grows by exactly
// both segments' committed inserts, each in its own stripe of keys.
func TestSegmentsInsertTogether(t *testing.T) {
	ctx := context.Background()
	const rows = 2000
	args := []string{"--records", "2000", "--workload", "d", "--insert-order", "ordered", "--insert-proportion", "0.5", "--read-proportion", "0.5"}
	dsn := loadertest.Loaded(t, newWorkload(t, args...))
	conn := connect(t, dsn)
	var ws [2]*Workload
	for i := range ws {
		ws[i] = newWorkload(t, args...)
		ws[i].SetSegment(i, 2)
		if err := ws[i].Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
	}
	dial := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) }
	var sums [2]metrics.Summary
	var errs [2]error
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := metrics.NewRecorder(w.TxTypes(), time.Now())
			var acc metrics.Accumulator
			// 150 transactions (not a time) from a fixed seed: at 50%
			// inserts, "committed no insert" cannot happen by chance.
			_, errs[i] = driver.Run(ctx, w, dial, driver.Config{Clients: 3, Transactions: 50, Seed: 1,
				Tick: 100 * time.Millisecond, OnInterval: acc.Add}, rec)
			acc.Fill(&sums[i])
		}()
	}
	wg.Wait()
	var inserted [2]int64
	for i := range ws {
		if errs[i] != nil {
			t.Fatalf("segment %d: %v", i, errs[i])
		}
		if sums[i].Failed > 0 {
			t.Errorf("segment %d: %d failed: %v", i, sums[i].Failed, sums[i].Errors)
		}
		for _, ts := range sums[i].Tx {
			if ts.Name == "insert" {
				inserted[i] = ts.Transactions
			}
		}
		if inserted[i] == 0 {
			t.Errorf("segment %d committed no insert", i)
		}
		if got := ws[i].keys.count(); got != rows+inserted[i] {
			t.Errorf("segment %d: readable %d, want %d", i, got, rows+inserted[i])
		}
	}
	for i := range ws {
		var n int64
		err := conn.QueryRow(ctx, `select count(*) from usertable
			where substr(ycsb_key, 5)::bigint >= $1 and (substr(ycsb_key, 5)::bigint - $1) % 2 = $2`, rows, i).Scan(&n)
		if err != nil || n != inserted[i] {
			t.Errorf("segment %d's stripe holds %d rows (%v), want its %d committed inserts", i, n, err, inserted[i])
		}
	}
	var total int64
	if err := conn.QueryRow(ctx, "select count(*) from usertable").Scan(&total); err != nil || total != rows+inserted[0]+inserted[1] {
		t.Errorf("%d rows (%v), want %d loaded + %d + %d inserted", total, err, rows, inserted[0], inserted[1])
	}
}
