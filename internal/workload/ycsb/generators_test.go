package ycsb

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
)

func newRNG() *rand.Rand { return rand.New(rand.NewPCG(7, 11)) }

const draws = 200000

// TestKeyName: YCSB's first key (key number 0, hashed) is the well-known
// user6284781860667377211.
func TestKeyName(t *testing.T) {
	for _, tc := range []struct {
		keynum int64
		hashed bool
		want   string
	}{
		{0, true, "user6284781860667377211"},
		{0, false, "user0"},
		{1234, false, "user1234"},
	} {
		if got := string(keyName(nil, tc.keynum, tc.hashed, 1)); got != tc.want {
			t.Errorf("keyName(%d, %v) = %s, want %s", tc.keynum, tc.hashed, got, tc.want)
		}
	}
}

// TestScrambledZetan: YCSB's precomputed ZETAN is zeta(10^10, 0.99), and
// zeta's Euler-Maclaurin tail agrees with the plain sum.
func TestScrambledZetan(t *testing.T) {
	if got := zeta(scrambledItems, zipfianConstant); math.Abs(got-scrambledZetan) > 1e-9 {
		t.Errorf("zeta(1e10, 0.99) = %.14f, want YCSB's %.14f", got, scrambledZetan)
	}
	const n = 3 * zetaExact
	var sum float64
	for i := 1; i <= n; i++ {
		sum += 1 / math.Pow(float64(i), zipfianConstant)
	}
	if got := zeta(n, zipfianConstant); math.Abs(got-sum) > 1e-10 {
		t.Errorf("zeta(%d) = %.14f, plain sum %.14f", n, got, sum)
	}
}

// TestZipfianSkew: Gray's method gives ranks 0 and 1 exactly their zipfian
// frequencies, 1/zeta(n) and 0.5^theta/zeta(n), and the tail falls off.
func TestZipfianSkew(t *testing.T) {
	const n = 1000
	z := newZipfian(n, zipfianConstant, 0)
	rng := newRNG()
	counts := make([]int, n)
	for range draws {
		r := z.next(rng)
		if r < 0 || r >= n {
			t.Fatalf("rank %d outside [0, %d)", r, n)
		}
		counts[r]++
	}
	zn := zeta(n, zipfianConstant)
	for rank, want := range []float64{1 / zn, math.Pow(0.5, zipfianConstant) / zn} {
		if got := float64(counts[rank]) / draws; math.Abs(got-want) > 0.05*want {
			t.Errorf("frequency of rank %d = %.4f, want %.4f", rank, got, want)
		}
	}
	top := 0
	for _, c := range counts[:n/10] {
		top += c
	}
	// the top 10% of ranks draw about zeta(100)/zeta(1000) of the draws
	want := zeta(n/10, zipfianConstant) / zn
	if got := float64(top) / draws; math.Abs(got-want) > 0.03 {
		t.Errorf("top 10%% of ranks drew %.3f, want about %.3f", got, want)
	}
}

// TestZipfianGrow: a grown zipfian equals one made at the larger size.
func TestZipfianGrow(t *testing.T) {
	z := newZipfian(1000, zipfianConstant, 0)
	z.grow(1010)
	z.grow(200000)
	fresh := newZipfian(200000, zipfianConstant, 0)
	if math.Abs(z.zetan-fresh.zetan) > 1e-9 || math.Abs(z.eta-fresh.eta) > 1e-12 {
		t.Errorf("grown zetan %.12f eta %.12f, fresh %.12f %.12f", z.zetan, z.eta, fresh.zetan, fresh.eta)
	}
}

// TestScrambledZipfian: the scrambled zipfian stays in its space, is
// skewed (a few keys draw far more than their share), and scatters the
// popular keys instead of clustering them at the low key numbers.
func TestScrambledZipfian(t *testing.T) {
	const space = 10000
	z := newZipfian(scrambledItems, zipfianConstant, scrambledZetan)
	rng := newRNG()
	counts := make([]int, space)
	for range draws {
		k := scrambled(&z, rng, space)
		if k < 0 || k >= space {
			t.Fatalf("key %d outside [0, %d)", k, space)
		}
		counts[k]++
	}
	keys := make([]int, space)
	for i := range keys {
		keys[i] = i
	}
	sort.Slice(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	// rank 0 of 10^10 draws 1/ZETAN = 3.8% of the time
	if got, want := float64(counts[keys[0]])/draws, 1/scrambledZetan; math.Abs(got-want) > 0.1*want {
		t.Errorf("most popular key drew %.4f, want about %.4f", got, want)
	}
	top := 0
	for _, k := range keys[:space/100] {
		top += counts[k]
	}
	if share := float64(top) / draws; share < 0.2 {
		t.Errorf("the top 1%% of keys drew %.3f of the draws: not skewed", share)
	}
	low := 0
	for _, k := range keys[:10] {
		if k < space/10 {
			low++
		}
	}
	if low > 5 {
		t.Errorf("%d of the 10 most popular keys are in the lowest tenth: not scrambled (%v)", low, keys[:10])
	}
}

// TestHotspot: the hot fraction of the operations falls on the hot
// fraction of the keys.
func TestHotspot(t *testing.T) {
	const n = 10000
	rng := newRNG()
	hot := 0
	for range draws {
		k := hotspot(rng, n, 0.2, 0.8)
		if k < 0 || k >= n {
			t.Fatalf("key %d outside [0, %d)", k, n)
		}
		if k < n/5 {
			hot++
		}
	}
	if got := float64(hot) / draws; math.Abs(got-0.8) > 0.01 {
		t.Errorf("%.3f of draws on the hot 20%%, want 0.8", got)
	}
	if k := hotspot(rng, 1, 0.2, 0.8); k != 0 {
		t.Errorf("hotspot over 1 key = %d", k)
	}
}

// TestLatestFavoursRecent: latest draws the newest readable key most, and
// follows inserts as they are acknowledged.
func TestLatestFavoursRecent(t *testing.T) {
	w := newWorkload(t, "--workload", "d", "--records", "1000")
	c := w.NewWorker(0, newRNG()).(*worker)
	count := func() map[int64]int {
		m := map[int64]int{}
		for range draws / 4 {
			m[c.nextKey()]++
		}
		return m
	}
	m := count()
	if m[999] < m[998] || m[998] < m[990] || m[999] < draws/4/10 {
		t.Errorf("latest over 1000 keys: newest %d, next %d, 10th %d draws", m[999], m[998], m[990])
	}
	for k := range m {
		if k < 0 || k > 999 {
			t.Fatalf("latest drew %d outside the readable 0..999", k)
		}
	}
	for range 10 {
		c.keys.done(c.keys.take())
	}
	m = count()
	if m[1009] < m[999] || m[1009] < draws/4/10 {
		t.Errorf("after 10 inserts: newest (1009) %d draws, old newest (999) %d", m[1009], m[999])
	}
}

// TestKeySpace: the readable space grows over contiguous acknowledged
// inserts only; a failed insert's key is retried and holds the space back
// until it succeeds; a duplicate-key failure acknowledges.
func TestKeySpace(t *testing.T) {
	k := newKeySpace(100, 0, 1)
	a, b, c := k.take(), k.take(), k.take()
	if a != 100 || b != 101 || c != 102 {
		t.Fatalf("took %d %d %d, want 100 101 102", a, b, c)
	}
	k.done(c)
	k.done(b)
	if k.count() != 100 {
		t.Errorf("readable %d after 101, 102 with 100 in flight, want 100", k.count())
	}
	k.failed(a)
	if k.count() != 100 {
		t.Errorf("readable %d after 100 failed, want 100", k.count())
	}
	if again := k.take(); again != 100 {
		t.Fatalf("next insert took %d, want the failed 100 again", again)
	}
	k.done(100)
	if k.count() != 103 {
		t.Errorf("readable %d after 100 succeeded, want 103", k.count())
	}
	if next := k.take(); next != 103 {
		t.Errorf("took %d, want 103", next)
	}

	// many clients at once
	k = newKeySpace(0, 0, 1)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				key := k.take()
				if (i+g)%7 == 0 {
					k.failed(key)
					continue
				}
				k.done(key)
			}
		}()
	}
	wg.Wait()
	// every failed key was either retried or is still pending: the
	// readable space stops below the lowest pending one
	pending := append([]int64(nil), k.retry...)
	low := k.next
	for _, p := range pending {
		low = min(low, p)
	}
	if k.count() != low {
		t.Errorf("readable %d, want %d (lowest pending of %v, next %d)", k.count(), low, pending, k.next)
	}
}
