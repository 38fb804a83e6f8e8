package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Work on pgarena's histograms in proportion to their non-empty buckets.
//
// hdrhistogram-go's Mean, StdDev, Max, Merge and Encode each walk every
// bucket up to the largest value, ~100 instructions a bucket: a few
// million instructions per histogram and tick, however few transactions
// the interval held, and a fresh zlib compressor (~3 M instructions) per
// encoding. Here statistics, merges and the V2 encoding are computed from
// the list of non-empty buckets, with the same arithmetic in the same
// order as the library (so the results are identical; hist_test.go
// checks). Tick builds that list while it records (bucketSet) and keeps it
// in TxStats, merges of such TxStats merge the lists; for any other
// histogram the list is read from its counts (Export: one copy and one
// pass, still ~10x cheaper than one of the library's walks).

// Bucket layout of pgarena's bounds (histLowest 1, histDigits 3): bucket 0
// holds 0..2047 at unit resolution, bucket b > 0 holds 1024<<b..2048<<b-1
// in 1024 sub-buckets of width 1<<b (HdrHistogram's layout).
const (
	subBucketHalfCountMagnitude = 10
	subBucketHalfCount          = 1 << subBucketHalfCountMagnitude
	subBucketCount              = 2 * subBucketHalfCount
)

// bucketCount is one non-empty bucket: its flat index and count.
type bucketCount struct {
	idx   int32
	count int64
}

// bucketIndex is the flat counts index of value v (1 ≤ v ≤ histHighest),
// as HdrHistogram computes it.
func bucketIndex(v int64) int32 {
	b := int32(64-bits.LeadingZeros64(uint64(v)|(subBucketCount-1))) - (subBucketHalfCountMagnitude + 1)
	sub := int32(v >> uint(b))
	return (b+1)<<subBucketHalfCountMagnitude + sub - subBucketHalfCount
}

// bucketsLen is the number of buckets pgarena's values can fall in.
func bucketsLen() int { return int(bucketIndex(histHighest)) + 1 }

// bucketSet collects the non-empty buckets of a histogram being built,
// for reuse tick after tick: emptying it costs one bit per bucket. Its
// counts are chunks of 1024 buckets (one HdrHistogram magnitude, 8 KB),
// each made when a value first falls in it: a run's values fill a few of
// the 23 magnitudes, and an outlier costs its own chunk, not a copy of
// every bucket below it (growing one array to the largest value made
// 120 KB of a one-client run resident, most of it copies).
type bucketSet struct {
	chunks  [][]int64 // by bucket>>chunkShift; nil until a value falls in it
	touched []uint64  // a bit per bucket
	words   []uint64  // a bit per word of touched that has one: take skips the rest
}

const chunkShift = subBucketHalfCountMagnitude

func (s *bucketSet) add(v int64) {
	i := bucketIndex(v)
	if s.chunks == nil {
		n := bucketsLen()
		s.chunks = make([][]int64, (n+1<<chunkShift-1)>>chunkShift)
		s.touched = make([]uint64, (n+63)/64)
		s.words = make([]uint64, (len(s.touched)+63)/64)
	}
	c := s.chunks[i>>chunkShift]
	if c == nil {
		c = make([]int64, 1<<chunkShift)
		s.chunks[i>>chunkShift] = c
	}
	c[i&(1<<chunkShift-1)]++
	s.touched[i>>6] |= 1 << (i & 63)
	s.words[i>>12] |= 1 << (i >> 6 & 63)
}

// take returns the non-empty buckets in index order (non-nil: known, even
// when empty) and empties the set.
func (s *bucketSet) take() []bucketCount {
	n := 0
	for k, ws := range s.words {
		for ; ws != 0; ws &= ws - 1 {
			n += bits.OnesCount64(s.touched[k*64+bits.TrailingZeros64(ws)])
		}
	}
	out := make([]bucketCount, 0, n)
	for k, ws := range s.words {
		for ; ws != 0; ws &= ws - 1 {
			w := k*64 + bits.TrailingZeros64(ws)
			for word := s.touched[w]; word != 0; word &= word - 1 {
				i := w*64 + bits.TrailingZeros64(word)
				c := s.chunks[i>>chunkShift]
				out = append(out, bucketCount{int32(i), c[i&(1<<chunkShift-1)]})
				c[i&(1<<chunkShift-1)] = 0
			}
			s.touched[w] = 0
		}
		s.words[k] = 0
	}
	return out
}

// mergeBuckets returns the buckets of the sum of two histograms; nil (not
// known) if either is not known.
func mergeBuckets(a, b []bucketCount) []bucketCount {
	return mergeBucketsInto(make([]bucketCount, 0, max(len(a), len(b))), a, b)
}

// mergeBucketsInto is mergeBuckets, appending to dst (which must not share
// memory with a or b).
func mergeBucketsInto(dst, a, b []bucketCount) []bucketCount {
	if a == nil || b == nil {
		return nil
	}
	out := dst
	if out == nil {
		out = []bucketCount{} // known, if empty
	}
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0].idx < b[0].idx:
			out, a = append(out, a[0]), a[1:]
		case b[0].idx < a[0].idx:
			out, b = append(out, b[0]), b[1:]
		default:
			out = append(out, bucketCount{a[0].idx, a[0].count + b[0].count})
			a, b = a[1:], b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// bucketsOf returns known if it is known, else the non-empty buckets read
// from h; ok is false for a histogram of another layout.
func bucketsOf(h *hdr.Histogram, known []bucketCount) ([]bucketCount, bool) {
	if known != nil {
		return known, true
	}
	return nonEmpty(h)
}

// nonEmpty lists the non-empty buckets of h in index (value) order; ok is
// false for a histogram of another layout (then use hdr's methods).
func nonEmpty(h *hdr.Histogram) (buckets []bucketCount, ok bool) {
	s := h.Export()
	if s.LowestTrackableValue != histLowest || s.SignificantFigures != histDigits {
		return nil, false
	}
	for i, c := range s.Counts {
		if c != 0 {
			buckets = append(buckets, bucketCount{int32(i), c})
		}
	}
	return buckets, true
}

// bucketValue is the lowest value of the bucket at flat index idx and the
// bucket's width.
func bucketValue(idx int32) (lowest, width int64) {
	if idx < subBucketCount {
		return int64(idx), 1
	}
	b := idx>>subBucketHalfCountMagnitude - 1
	sub := int64(idx&(subBucketHalfCount-1) + subBucketHalfCount)
	return sub << b, 1 << b
}

// histPercentiles is h.ValueAtPercentilesSlice(ps) for ps ascending and
// above 0, from h's buckets (known, if known): hdr's walks every bucket
// up to the highest percentile's, tens of thousands for latencies of a
// second.
func histPercentiles(h *hdr.Histogram, known []bucketCount, ps []float64) []int64 {
	buckets, ok := bucketsOf(h, known)
	total := h.TotalCount()
	if !ok || total == 0 {
		return h.ValueAtPercentilesSlice(ps)
	}
	out := make([]int64, len(ps))
	i, next := 0, percentileRank(ps[0], total)
	var cum int64
	for _, b := range buckets {
		cum += b.count
		for cum >= next {
			v, w := bucketValue(b.idx)
			out[i] = v + w - 1 // hdr's highest equivalent value
			if i++; i == len(ps) {
				return out
			}
			next = percentileRank(ps[i], total)
		}
	}
	return out
}

// percentileRank is hdr's: the count of values at or below percentile p
// of total, at least 1.
func percentileRank(p float64, total int64) int64 {
	rank := min(p, 100)/100*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// histStats is Stats' mean, standard deviation and maximum (µs), as
// hdr's Mean, StdDev and Max compute them; known are h's buckets if known.
func histStats(h *hdr.Histogram, known []bucketCount) (mean, stddev float64, maxV int64) {
	buckets, ok := bucketsOf(h, known)
	if !ok {
		return h.Mean(), h.StdDev(), h.Max()
	}
	total := float64(h.TotalCount())
	if total == 0 {
		return 0, 0, 0
	}
	mean = bucketsMean(buckets, total)
	var dev2 float64
	for _, b := range buckets {
		v, w := bucketValue(b.idx)
		d := float64(v+w>>1) - mean
		dev2 += (d * d) * float64(b.count) / total
	}
	if n := len(buckets); n > 0 {
		v, w := bucketValue(buckets[n-1].idx)
		maxV = v + w - 1
	}
	return mean, math.Sqrt(dev2), maxV
}

// bucketsMean is the mean of the values in buckets, of which there are
// total, as hdr's Mean computes it.
func bucketsMean(buckets []bucketCount, total float64) (mean float64) {
	for _, b := range buckets {
		v, w := bucketValue(b.idx)
		mean += float64(b.count) * float64(v+w>>1) / total
	}
	return mean
}

// mergeHist adds from's values to to, as to.Merge(from) does; known are
// from's buckets if known.
func mergeHist(to, from *hdr.Histogram, known []bucketCount) {
	if from.TotalCount() == 0 {
		return
	}
	buckets, ok := bucketsOf(from, known)
	if !ok {
		to.Merge(from)
		return
	}
	recordBuckets(to, buckets)
}

// recordBuckets adds buckets (of pgarena's layout) to the empty or
// same-layout histogram h.
func recordBuckets(h *hdr.Histogram, buckets []bucketCount) {
	for _, b := range buckets {
		v, _ := bucketValue(b.idx)
		_ = h.RecordValues(v, b.count) // within range: same layout
	}
}

// V2 encoding cookies (HdrHistogram's V2 format, word size 8).
const (
	v2EncodingCookie           int32 = hdr.V2EncodingCookieBase | 0x10
	v2CompressedEncodingCookie int32 = hdr.V2CompressedEncodingCookieBase | 0x10
)

// zlibWriters reuses compressors. HuffmanOnly, not hdrhistogram-go's
// BestCompression: at levels 2-9 compress/flate keeps 640 KB of hash chains
// that each Reset clears (the first encoding of a run made 850 KB of the
// process resident), and BestSpeed writes a 128 KB hash table all over for
// any payload of 128 B or more (250 KB resident at 8 clients). A V2
// payload (LEB128 counts, empty runs already folded) has few repeats for
// LZ77 to find: Huffman codes alone make it 3-16% smaller than BestSpeed
// on latency histograms (41 B to 4.8 KB payloads), with no table.
// Payloads of up to fixedMax bytes skip it (zfixed.go). A cache, not
// state: any writer is as good as another.
var zlibWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.HuffmanOnly) // a valid level: no error
	return w
}}

// encodeV2 is h.Encode(hdr.V2CompressedEncodingCookieBase)'s format, the
// same payload compressed at another level (any zlib reader decodes it),
// from the non-empty buckets (known, if known). ok is false for a histogram
// of another layout.
func encodeV2(h *hdr.Histogram, known []bucketCount) (string, bool) {
	buckets, ok := bucketsOf(h, known)
	if !ok {
		return "", false
	}
	// Counts payload: ZigZag LEB128 per bucket up to the last non-empty one
	// (at least one bucket), a run of more than one empty bucket as its
	// negated length.
	var counts []byte
	next := int32(0)
	zeros := func(n int32) {
		if n == 1 {
			counts = appendZigZag(counts, 0)
		} else if n > 1 {
			counts = appendZigZag(counts, -int64(n))
		}
	}
	for _, b := range buckets {
		zeros(b.idx - next)
		counts = appendZigZag(counts, b.count)
		next = b.idx + 1
	}
	if len(buckets) == 0 {
		counts = appendZigZag(counts, 0)
	}
	var raw bytes.Buffer
	raw.Grow(40 + len(counts))
	be := binary.BigEndian
	raw.Write(be.AppendUint32(nil, uint32(v2EncodingCookie)))
	raw.Write(be.AppendUint32(nil, uint32(len(counts))))
	raw.Write(be.AppendUint32(nil, 0)) // normalizing index offset
	raw.Write(be.AppendUint32(nil, uint32(histDigits)))
	raw.Write(be.AppendUint64(nil, uint64(histLowest)))
	raw.Write(be.AppendUint64(nil, uint64(histHighest)))
	raw.Write(be.AppendUint64(nil, math.Float64bits(1)))
	raw.Write(counts)

	out := make([]byte, 8, 8+raw.Len()+16)
	be.PutUint32(out, uint32(v2CompressedEncodingCookie))
	if raw.Len() <= fixedMax {
		out = appendZlibFixed(out, raw.Bytes()) // zfixed.go
	} else {
		z := bytes.NewBuffer(out)
		w := zlibWriters.Get().(*zlib.Writer)
		w.Reset(z)
		_, _ = w.Write(raw.Bytes()) // writes to a bytes.Buffer do not fail
		_ = w.Close()
		zlibWriters.Put(w)
		out = z.Bytes()
	}
	be.PutUint32(out[4:], uint32(len(out)-8))
	return base64.StdEncoding.EncodeToString(out), true
}

// appendZigZag appends v as HdrHistogram's ZigZag LEB128-64b9B.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u)) // the ninth byte carries 8 bits
}
