package ycsb

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// zipfianConstant is YCSB's ZipfianGenerator.ZIPFIAN_CONSTANT (theta): the
// skew of every zipfian draw of the core workloads. Not a knob.
const zipfianConstant = 0.99

// YCSB's ScrambledZipfianGenerator draws a zipfian rank from a fixed, huge
// item space and hashes it onto the key space, so that popular keys are
// scattered and the space can be sized independently of the skew. It
// precomputes zeta for that space (ZETAN). pgarena uses 10^10 items, the
// space ZETAN was computed for (YCSB later raised ITEM_COUNT to 10^16 but
// kept the 10^10 constant; TestScrambledZetan recomputes it).
const (
	scrambledItems = 10_000_000_000
	scrambledZetan = 26.46902820178302
)

// zipfian draws ranks 0..items-1 with frequency proportional to
// 1/(rank+1)^theta by the method of Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases" (SIGMOD 1994), as YCSB's
// ZipfianGenerator: rank 0 is the most popular. The item count may grow
// (grow), as YCSB's nextLong(itemcount) allows for the latest
// distribution. The zero value is not ready: use newZipfian.
type zipfian struct {
	items int64
	theta float64
	alpha float64 // 1/(1-theta)
	zeta2 float64 // zeta(2, theta)
	zetan float64 // zeta(items, theta)
	eta   float64
}

// newZipfian returns a zipfian over items ranks; zetan is zeta(items,
// theta) when the caller knows it, or 0 to compute it.
func newZipfian(items int64, theta, zetan float64) zipfian {
	if zetan == 0 {
		zetan = zeta(items, theta)
	}
	z := zipfian{items: items, theta: theta, alpha: 1 / (1 - theta), zeta2: zeta(2, theta), zetan: zetan}
	z.setEta()
	return z
}

func (z *zipfian) setEta() {
	z.eta = (1 - math.Pow(2/float64(z.items), 1-z.theta)) / (1 - z.zeta2/z.zetan)
}

// grow extends the ranks to items (no-op when items does not exceed the
// current count). Small steps add the new terms of zeta one by one; large
// ones recompute it.
func (z *zipfian) grow(items int64) {
	if items <= z.items {
		return
	}
	if items-z.items <= 4096 {
		for i := z.items + 1; i <= items; i++ {
			z.zetan += 1 / math.Pow(float64(i), z.theta)
		}
	} else {
		z.zetan = zeta(items, z.theta)
	}
	z.items = items
	z.setEta()
}

// next draws a rank in [0, items).
func (z *zipfian) next(rng *rand.Rand) int64 {
	u := rng.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return 1
	}
	r := int64(float64(z.items) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(r, z.items-1)
}

// zetaExact is the number of terms zeta sums one by one; beyond it the
// Euler-Maclaurin formula adds the tail (error far below 1e-12 at this
// cut), so zeta of a billion items costs no more than of 100000.
const zetaExact = 100000

// zeta returns sum_{i=1..n} 1/i^theta.
func zeta(n int64, theta float64) float64 {
	m := min(n, zetaExact)
	var sum float64
	for i := int64(1); i <= m; i++ {
		sum += 1 / math.Pow(float64(i), theta)
	}
	if n == m {
		return sum
	}
	// sum_{i=M+1..N} f(i) = integral_M^N f + (f(N)-f(M))/2 + (f'(N)-f'(M))/12 + ...
	// with f(x) = x^-theta, f'(x) = -theta x^(-theta-1).
	M, N := float64(m), float64(n)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	df := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	integral := (math.Pow(N, 1-theta) - math.Pow(M, 1-theta)) / (1 - theta)
	return sum + integral + (f(N)-f(M))/2 + (df(N)-df(M))/12
}

// fnv64 is YCSB's Utils.fnvhash64: FNV-1a over the 8 bytes of v, lowest
// first, made non-negative as Java's Math.abs does (which leaves
// math.MinInt64 negative).
func fnv64(v int64) int64 {
	h := uint64(0xCBF29CE484222325)
	for range 8 {
		h ^= uint64(v) & 0xff
		h *= 1099511628211
		v >>= 8
	}
	s := int64(h)
	if s < 0 {
		s = -s
	}
	return s
}

// scrambled draws YCSB's scrambled zipfian over [0, space): a zipfian rank
// among scrambledItems, hashed onto the space.
func scrambled(z *zipfian, rng *rand.Rand, space int64) int64 {
	return int64(uint64(fnv64(z.next(rng))) % uint64(space))
}

// hotspot draws YCSB's HotspotIntegerGenerator over [0, n): a fraction
// opn of the draws falls uniformly on the first data*n key numbers (the
// hot set), the rest uniformly on the others.
func hotspot(rng *rand.Rand, n int64, data, opn float64) int64 {
	hot := int64(float64(n) * data)
	cold := n - hot
	if hot > 0 && (cold == 0 || rng.Float64() < opn) {
		return rng.Int64N(hot)
	}
	return hot + rng.Int64N(cold)
}

// exponential is YCSB's ExponentialGenerator as CoreWorkload builds it for
// the exponential request distribution: gamma is chosen so that a
// fraction percentile/100 of the draws fall below span (recordcount *
// exponential.frac), gamma = -ln(1 - percentile/100) / span, and a draw
// is -ln(u)/gamma, truncated to a whole offset back from the newest key.
type exponential struct {
	gamma float64
}

// Defaults of YCSB's exponential.percentile and exponential.frac: 95% of
// the operations on the newest 6/7 of the records.
const (
	defaultExpPercentile = 95
	defaultExpFrac       = 0.8571428571
)

func newExponential(percentile, span float64) exponential {
	return exponential{gamma: -math.Log(1-percentile/100) / span}
}

// next draws an offset >= 0 (0 the most likely).
func (e exponential) next(rng *rand.Rand) int64 {
	u := 1 - rng.Float64() // in (0, 1]: ln(0) is not a draw
	return int64(-math.Log(u) / e.gamma)
}

// Field length distributions (YCSB's fieldlengthdistribution; histogram
// is not offered).
const (
	lengthConstant = "constant"
	lengthUniform  = "uniform"
	lengthZipfian  = "zipfian"
)

// fieldLengths draws field value lengths as CoreWorkload's
// fieldlengthgenerator: constant (always max), uniform over [min, max],
// or zipfian over [min, max] favouring short values (YCSB's
// ZipfianGenerator(min, max), constant 0.99). A constant draws nothing
// from the random source. The zero value is not ready: use
// newFieldLengths.
type fieldLengths struct {
	dist     string
	min, max int
	z        zipfian // zipfian: over max-min+1 lengths
}

func newFieldLengths(dist string, min, max int) fieldLengths {
	l := fieldLengths{dist: dist, min: min, max: max}
	if dist == lengthZipfian {
		l.z = newZipfian(int64(max-min+1), zipfianConstant, 0)
	}
	return l
}

// next draws one length.
func (l *fieldLengths) next(rng *rand.Rand) int {
	switch l.dist {
	case lengthUniform:
		return l.min + rng.IntN(l.max-l.min+1)
	case lengthZipfian:
		return l.min + int(l.z.next(rng))
	default:
		return l.max
	}
}

// appendIntegrityValue appends the value YCSB's dataintegrity gives field
// number field of key (CoreWorkload.buildDeterministicValue): the key, ':'
// and the field's name, then, while shorter than size, ':' followed by
// the decimal Java String.hashCode of everything so far (the ':'
// included), cut to size. The hash is kept up to date as bytes are
// appended (s[0]*31^(n-1) + ... + s[n-1], wrapping at 32 bits as Java's
// int does); the values are ASCII, so Java's UTF-16 units are the bytes.
func appendIntegrityValue(dst []byte, key string, field, size int) []byte {
	start := len(dst)
	dst = append(dst, key...)
	dst = append(dst, ":field"...)
	dst = strconv.AppendInt(dst, int64(field), 10)
	var h int32
	for _, b := range dst[start:] {
		h = 31*h + int32(b)
	}
	for len(dst)-start < size {
		dst = append(dst, ':')
		h = 31*h + ':'
		from := len(dst)
		dst = strconv.AppendInt(dst, int64(h), 10)
		for _, b := range dst[from:] {
			h = 31*h + int32(b)
		}
	}
	return dst[:start+size]
}
