package ycsb

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestKeyNamePadding: YCSB's zeropadding pads the number (after hashing)
// to the given digits and never cuts it: key 5 with zeropadding 8 is
// user00000005 (CoreWorkload's documentation).
func TestKeyNamePadding(t *testing.T) {
	for _, tc := range []struct {
		keynum int64
		hashed bool
		pad    int
		want   string
	}{
		{5, false, 8, "user00000005"},
		{5, false, 1, "user5"},
		{123456, false, 3, "user123456"},
		{0, true, 21, "user006284781860667377211"},
	} {
		if got := string(keyName(nil, tc.keynum, tc.hashed, tc.pad)); got != tc.want {
			t.Errorf("keyName(%d, %v, %d) = %s, want %s", tc.keynum, tc.hashed, tc.pad, got, tc.want)
		}
	}
}

// TestExponential: YCSB's exponential puts percentile% of the draws below
// the span it was made for, the smallest offsets most often, with mean
// 1/gamma.
func TestExponential(t *testing.T) {
	const span = 857.1428571
	for _, pct := range []float64{95, 50, 99.9} {
		e := newExponential(pct, span)
		rng := newRNG()
		below, zeros, ones := 0, 0, 0
		var sum float64
		for range draws {
			v := e.next(rng)
			if v < 0 {
				t.Fatalf("negative offset %d", v)
			}
			if float64(v) < span {
				below++
			}
			switch v {
			case 0:
				zeros++
			case 1:
				ones++
			}
			sum += float64(v)
		}
		if got := 100 * float64(below) / draws; math.Abs(got-pct) > 0.5 {
			t.Errorf("percentile %g: %.2f%% of the draws below the span", pct, got)
		}
		if zeros < ones {
			t.Errorf("percentile %g: offset 0 drawn %d times, 1 %d: not decreasing", pct, zeros, ones)
		}
		// the truncated mean is about 1/gamma - 1/2
		if want := 1/e.gamma - 0.5; math.Abs(sum/draws-want) > 0.02*want {
			t.Errorf("percentile %g: mean offset %.2f, want about %.2f", pct, sum/draws, want)
		}
	}
}

// TestExponentialKeys: the exponential request distribution of a run over
// 1000 rows draws 95% of its keys among the newest 6/7 of them (YCSB's
// defaults), the newest most, and follows acknowledged inserts.
func TestExponentialKeys(t *testing.T) {
	w := newWorkload(t, "--workload", "d", "--records", "1000", "--request-distribution", "exponential")
	c := w.NewWorker(0, newRNG()).(*worker)
	hits := map[int64]int{}
	newest := 0
	for range draws {
		k := c.nextKey()
		if k < 0 || k > 999 {
			t.Fatalf("drew %d outside the readable 0..999", k)
		}
		hits[k]++
		if k >= 1000-857 {
			newest++
		}
	}
	// without the redraws of offsets past key 0 it would be 95%: they
	// leave the draws of offsets 0..999, in proportion
	g := c.exp.gamma
	if want, got := (1-math.Exp(-g*857))/(1-math.Exp(-g*1000)), float64(newest)/draws; math.Abs(got-want) > 0.005 {
		t.Errorf("%.4f of the draws on the newest 857 keys, want %.4f", got, want)
	}
	if hits[999] < hits[900] || hits[999] < hits[500] {
		t.Errorf("newest key drawn %d times, 900: %d, 500: %d", hits[999], hits[900], hits[500])
	}
	for range 10 {
		c.keys.done(c.keys.take())
	}
	hits = map[int64]int{}
	for range draws / 10 {
		hits[c.nextKey()]++
	}
	if hits[1009] == 0 || hits[1009] < hits[500] {
		t.Errorf("after 10 inserts the newest key 1009 was drawn %d times", hits[1009])
	}
}

// TestSequentialKeys: the sequential request distribution hands out the
// rows the run began with in turn, one counter for all the workload's
// clients, wrapping after the last (YCSB's SequentialGenerator).
func TestSequentialKeys(t *testing.T) {
	w := newWorkload(t, "--records", "5", "--request-distribution", "sequential")
	a := w.NewWorker(0, newRNG()).(*worker)
	b := w.NewWorker(1, newRNG()).(*worker)
	a.keys.done(a.keys.take()) // an insert does not extend the sequence
	var got []int64
	for i := range 12 {
		c := a
		if i%3 == 2 {
			c = b
		}
		got = append(got, c.nextKey())
	}
	want := []int64{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sequential keys %v, want %v", got, want)
		}
	}
}

// TestFieldLengths: constant is always the field length and draws
// nothing; uniform covers min..max evenly; zipfian favours the shortest,
// rank 0 (min) drawn 1/zeta(n) of the time.
func TestFieldLengths(t *testing.T) {
	pcg := rand.NewPCG(3, 4)
	rng := rand.New(pcg)
	c := newFieldLengths(lengthConstant, 1, 100)
	before := *pcg
	if n := c.next(rng); n != 100 || *pcg != before {
		t.Errorf("constant: %d (or drew from the source)", n)
	}
	for _, dist := range []string{lengthUniform, lengthZipfian} {
		l := newFieldLengths(dist, 5, 104) // 100 lengths
		counts := map[int]int{}
		var sum float64
		for range draws {
			n := l.next(rng)
			if n < 5 || n > 104 {
				t.Fatalf("%s: length %d outside 5..104", dist, n)
			}
			counts[n]++
			sum += float64(n)
		}
		switch dist {
		case lengthUniform:
			if mean := sum / draws; math.Abs(mean-54.5) > 0.5 {
				t.Errorf("uniform: mean length %.2f, want 54.5", mean)
			}
			if len(counts) != 100 {
				t.Errorf("uniform: %d distinct lengths, want 100", len(counts))
			}
		case lengthZipfian:
			want := 1 / zeta(100, zipfianConstant)
			if got := float64(counts[5]) / draws; math.Abs(got-want) > 0.05*want {
				t.Errorf("zipfian: shortest length drawn %.4f, want %.4f", got, want)
			}
			if counts[5] < counts[6] || counts[6] < counts[50] || counts[50] < counts[104] {
				t.Errorf("zipfian: lengths 5, 6, 50, 104 drawn %d %d %d %d: not favouring short", counts[5], counts[6], counts[50], counts[104])
			}
		}
	}
}

// javaHash is Java's String.hashCode, computed from scratch.
func javaHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return h
}

// TestIntegrityValue: appendIntegrityValue builds YCSB's
// buildDeterministicValue, checked against a from-scratch construction
// (the hash of the whole string so far, recomputed each step).
func TestIntegrityValue(t *testing.T) {
	if h := javaHash("ab"); h != 97*31+98 {
		t.Fatalf("javaHash(ab) = %d", h)
	}
	for _, tc := range []struct {
		key   string
		field int
		size  int
	}{{"user1", 0, 100}, {"user6284781860667377211", 9, 1000}, {"user42", 3, 5}, {"user42", 12, 12}} {
		sb := tc.key + ":field" + strconv.Itoa(tc.field)
		for len(sb) < tc.size {
			sb += ":"
			sb += strconv.Itoa(int(javaHash(sb)))
		}
		want := sb[:tc.size]
		got := string(appendIntegrityValue([]byte("prefix"), tc.key, tc.field, tc.size))
		if got != "prefix"+want {
			t.Errorf("%s field%d size %d:\n got %q\nwant %q", tc.key, tc.field, tc.size, got, "prefix"+want)
		}
	}
	if v := string(appendIntegrityValue(nil, "user1", 0, 20)); v[:13] != "user1:field0:" {
		t.Errorf("value %q", v)
	}
}

// TestCoversRecords: the slices complete the set when their ranges cover
// 0..records-1, in any order, overlapping or not.
func TestCoversRecords(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  bool
	}{
		{[]string{"0-49", "50-99"}, true},
		{[]string{"50-99", "0-49"}, true},
		{[]string{"0-60", "40-99"}, true},
		{[]string{"0-49"}, false},
		{[]string{"1-99"}, false},
		{[]string{"0-48", "50-99"}, false},
		{[]string{"0-49", "50-98"}, false},
		{[]string{"0-99x"}, false},
	} {
		if got := coversRecords(tc.names, 100); got != tc.want {
			t.Errorf("coversRecords(%v, 100) = %v, want %v", tc.names, got, tc.want)
		}
	}
}

// TestZipfianSpaceOperationCount: the scrambled zipfian's space is the
// rows plus twice the inserts expected of the operation count
// (CoreWorkload's expectednewkeys), or of records operations without one.
func TestZipfianSpaceOperationCount(t *testing.T) {
	args := []string{"--records", "1000", "--workload", "a", "--insert-proportion", "0.1", "--update-proportion", "0.4"}
	c := newWorkload(t, args...).NewWorker(0, newRNG()).(*worker)
	if c.space != 1000+200 {
		t.Errorf("space %d without --operation-count, want 1200", c.space)
	}
	w := newWorkload(t, append(args, "--operation-count", "50000")...)
	if w.OperationCount() != 50000 {
		t.Errorf("OperationCount %d", w.OperationCount())
	}
	if c := w.NewWorker(0, newRNG()).(*worker); c.space != 1000+10000 {
		t.Errorf("space %d with --operation-count 50000, want 11000", c.space)
	}
}
