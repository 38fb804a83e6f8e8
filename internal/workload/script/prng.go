package script

import (
	"math"
	"math/bits"
	"sync"
)

// prng is PostgreSQL's pg_prng (src/common/pg_prng.c): Blackman and Vigna's
// xoroshiro128** 1.0, seeded through splitmix64. pgbench draws every random
// function of a client from one such state, seeded from --random-seed in a
// fixed order (see seedClient), so a script run with the same seed draws
// the same values as under pgbench.
type prng struct{ s0, s1 uint64 }

// seed fills the state from a 64-bit seed, never all zeroes (pg_prng_seed).
func (p *prng) seed(seed uint64) {
	p.s0 = splitmix64(&seed)
	p.s1 = splitmix64(&seed)
	if p.s0 == 0 && p.s1 == 0 {
		p.s0, p.s1 = 0x5851F42D4C957F2D, 0x14057B7EF767814F // Knuth's LCG constants, as pg_prng
	}
}

func splitmix64(state *uint64) uint64 {
	*state += 0x9E3779B97F4A7C15
	v := *state
	v = (v ^ v>>30) * 0xBF58476D1CE4E5B9
	v = (v ^ v>>27) * 0x94D049BB133111EB
	return v ^ v>>31
}

// uint64 is one step of xoroshiro128**.
func (p *prng) uint64() uint64 {
	s0 := p.s0
	sx := p.s1 ^ s0
	v := bits.RotateLeft64(s0*5, 7) * 9
	p.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ sx<<16
	p.s1 = bits.RotateLeft64(sx, 37)
	return v
}

// uint64Range is uniform in [lo, hi] by bitmask rejection
// (pg_prng_uint64_range).
func (p *prng) uint64Range(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	span := hi - lo
	shift := uint(bits.LeadingZeros64(span))
	for {
		v := p.uint64() >> shift
		if v <= span {
			return lo + v
		}
	}
}

// double is uniform in [0, 1) from the top 52 bits (pg_prng_double).
func (p *prng) double() float64 {
	return math.Ldexp(float64(p.uint64()>>12), -52)
}

// random is pgbench's getrand: uniform in [lo, hi]; hi-lo+1 must not
// overflow (checked by the caller, as pgbench does).
func (p *prng) random(lo, hi int64) int64 {
	return lo + int64(p.uint64Range(0, uint64(hi-lo)))
}

// exponential is pgbench's getExponentialRand.
func (p *prng) exponential(lo, hi int64, param float64) int64 {
	cut := math.Exp(-param)
	u := 1.0 - p.double()
	r := -math.Log(cut+(1.0-cut)*u) / param
	return lo + int64(float64(hi-lo+1)*r)
}

// gaussian is pgbench's getGaussianRand: Box-Muller (pg_prng_double_normal)
// retried until within ±param.
func (p *prng) gaussian(lo, hi int64, param float64) int64 {
	var stdev float64
	for {
		u1 := 1.0 - p.double()
		u2 := 1.0 - p.double()
		stdev = math.Sqrt(-2.0*math.Log(u1)) * math.Sin(2.0*math.Pi*u2)
		if stdev >= -param && stdev < param {
			break
		}
	}
	r := (stdev + param) / (param * 2.0)
	return lo + int64(float64(hi-lo+1)*r)
}

// zipfian is pgbench's getZipfianRand: Devroye's rejection method
// ("Non-Uniform Random Variate Generation", p. 550).
func (p *prng) zipfian(lo, hi int64, s float64) int64 {
	n := hi - lo + 1
	if n <= 1 {
		return lo
	}
	b := math.Pow(2.0, s-1.0)
	var x float64
	for {
		u := p.double()
		v := p.double()
		x = math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= float64(n) {
			break
		}
	}
	return lo - 1 + int64(x)
}

// permute is pgbench's permute(i, size, seed): a pseudorandom bijection of
// [0, size) keyed by seed (six rounds of odd multiply, xor and rotate on
// overlapping halves, then a random offset).
func permute(val, isize, seed int64) int64 {
	if isize < 2 {
		return 0
	}
	var st prng
	st.seed(uint64(seed))
	size := uint64(isize)
	v := uint64(val) % size
	masklen := uint(63 - bits.LeadingZeros64(size))
	mask := uint64(1)<<masklen - 1
	for i := 0; i < 6; i++ {
		m := st.uint64()&mask | 1
		r := st.uint64() & mask
		if v <= mask {
			v = (v*m ^ r) & mask
			v = (v<<1)&mask | v>>(masklen-1)
		}
		m = st.uint64()&mask | 1
		r = st.uint64() & mask
		t := size - 1 - v
		if t <= mask {
			t = (t*m ^ r) & mask
			t = (t<<1)&mask | t>>(masklen-1)
			v = size - 1 - t
		}
		r = st.uint64Range(0, size-1)
		v = (v + r) % size
	}
	return int64(v)
}

// FNV-1a and MurmurHash2 (64-bit) as pgbench's hash_fnv1a and hash_murmur2.
const (
	fnvPrime       = 0x100000001b3
	fnvOffsetBasis = 0xcbf29ce484222325
	mm2Mul         = 0xc6a4a7935bd1e995
	mm2MulTimes8   = 0x35253c9ade8f4ca8
	mm2Rot         = 47
)

func hashFNV1a(val int64, seed uint64) int64 {
	result := uint64(fnvOffsetBasis) ^ seed
	for i := 0; i < 8; i++ {
		octet := uint64(val & 0xff)
		val >>= 8
		result ^= octet
		result *= fnvPrime
	}
	return int64(result)
}

func hashMurmur2(val int64, seed uint64) int64 {
	result := seed ^ mm2MulTimes8
	k := uint64(val)
	k *= mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	result ^= k
	result *= mm2Mul
	result ^= result >> mm2Rot
	result *= mm2Mul
	result ^= result >> mm2Rot
	return int64(result)
}

// clientSeeds derives what pgbench derives from --random-seed for client
// id of n: the client's function state (each client in order draws one
// value from the base sequence), and the default_seed of the hash
// functions (the next value, shared by all clients).
func clientSeeds(seed uint64, id, n int) (fn prng, defaultSeed int64) {
	var base prng
	base.seed(seed)
	for i := 0; i < n; i++ {
		s := base.uint64()
		if i == id {
			fn.seed(s)
		}
	}
	if id >= n {
		fn.seed(base.uint64())
	}
	return fn, int64(base.uint64())
}

// seedDraws keeps the base sequence's first n+2 draws for one (seed, n), so
// that each client's NewRunner looks its seeds up instead of drawing up to n
// values again (quadratic in clients: 10,000 clients drew 10^8 values).
type seedDraws struct {
	mu    sync.Mutex
	seed  uint64
	n     int
	draws []uint64
}

// clientSeeds is clientSeeds(seed, id, n), from the draws of (seed, n).
func (d *seedDraws) clientSeeds(seed uint64, id, n int) (fn prng, defaultSeed int64) {
	d.mu.Lock()
	if d.draws == nil || d.seed != seed || d.n != n {
		var base prng
		base.seed(seed)
		d.seed, d.n, d.draws = seed, n, make([]uint64, n+2)
		for i := range d.draws {
			d.draws[i] = base.uint64()
		}
	}
	draws := d.draws
	d.mu.Unlock()
	if id < n {
		fn.seed(draws[id])
		return fn, int64(draws[n])
	}
	fn.seed(draws[n])
	return fn, int64(draws[n+1])
}
