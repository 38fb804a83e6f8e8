package sysbench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
)

// Distribution names, as sysbench's --rand-type takes them.
const (
	randUniform  = "uniform"
	randSpecial  = "special"
	randGaussian = "gaussian"
	randPareto   = "pareto"
)

var randTypes = []string{randUniform, randSpecial, randGaussian, randPareto}

// distribution is sysbench's default random number generator
// (sysbench.rand.default, sb_rand in the Lua scripts): the --rand-type
// distribution with its parameters, computed once as sb_rand.c's
// sb_rand_init does. The arithmetic follows sb_rand.c: doubles in [0, 1)
// scaled to the range and truncated to an unsigned 32-bit integer.
type distribution struct {
	kind        string
	iter        float64 // --rand-spec-iter
	pctMult     float64 // --rand-spec-pct / 100
	pct2Mult    float64 // --rand-spec-pct / 200
	resMult     float64 // 100 / (100 - --rand-spec-res)
	paretoPower float64 // log(h) / log(1-h)
}

func newDistribution(kind string, iter, pct, res int, paretoH float64) (distribution, error) {
	d := distribution{kind: kind, iter: float64(iter), pctMult: float64(pct) / 100, pct2Mult: float64(pct) / 200,
		resMult: 100 / (100 - float64(res)), paretoPower: math.Log(paretoH) / math.Log(1-paretoH)}
	switch {
	case !contains(randTypes, kind):
		if kind == "zipfian" {
			return d, fmt.Errorf("--rand-type zipfian is sysbench 1.1's, not 1.0's (choose %s)", strings.Join(randTypes, ", "))
		}
		return d, fmt.Errorf("unknown --rand-type %q (choose %s)", kind, strings.Join(randTypes, ", "))
	case iter < 1:
		return d, fmt.Errorf("--rand-spec-iter must be at least 1 (got %d)", iter)
	case pct < 0 || pct > 100:
		return d, fmt.Errorf("--rand-spec-pct must be between 0 and 100 (got %d)", pct)
	case res < 0 || res >= 100:
		return d, fmt.Errorf("--rand-spec-res must be between 0 and 99 (got %d)", res)
	case !(paretoH > 0 && paretoH < 1):
		return d, fmt.Errorf("--rand-pareto-h must be between 0 and 1, exclusive (got %g)", paretoH)
	}
	return d, nil
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// draw returns a number in [a, b] (b included, except that sysbench's
// special distribution never returns b itself).
func (d *distribution) draw(rng *rand.Rand, a, b uint32) uint32 {
	switch d.kind {
	case randSpecial:
		return special(rng, a, b, d)
	case randGaussian:
		t := float64(b - a + 1)
		var sum float64
		for i := 0; i < int(d.iter); i++ {
			sum += rng.Float64() * t
		}
		return a + uint32(sum/d.iter)
	case randPareto:
		return a + uint32(float64(b-a+1)*math.Pow(rng.Float64(), d.paretoPower))
	default:
		return uniform(rng, a, b)
	}
}

// uniform is sb_rand_uniform: a + u·(b−a+1), u in [0, 1).
func uniform(rng *rand.Rand, a, b uint32) uint32 {
	return a + uint32(rng.Float64()*float64(b-a+1))
}

// special is sb_rand_special, sysbench's default: with probability
// res% (--rand-spec-res, 75) a uniform value from the pct% (--rand-spec-pct,
// 1) of the range around its middle, otherwise the mean of iter uniform
// draws (a bell over the whole range).
func special(rng *rand.Rand, a, b uint32, d *distribution) uint32 {
	t := float64(b - a)
	rnd := rng.Float64()
	if rnd*t*d.resMult < t {
		var sum float64
		for i := 0; i < int(d.iter); i++ {
			sum += rng.Float64()
		}
		return uint32(float64(a) + sum*t/d.iter)
	}
	res := rnd*(t*d.pctMult+1) + t/2 - t*d.pct2Mult
	return a + uint32(res)
}

// Value templates of oltp_common.lua: groups of 11 random digits joined by
// '-'; c has 10 groups (119 characters, stored in char(120)), pad 5 (59,
// in char(60)).
const (
	groupDigits = 11
	cGroups     = 10
	padGroups   = 5
	cLen        = cGroups*(groupDigits+1) - 1
	padLen      = padGroups*(groupDigits+1) - 1
)

// appendGroups appends n groups of 11 random digits separated by '-', as
// sysbench.rand.string does for "###########-###########...": every digit
// uniform. One draw below 10^11 gives a group's 11 digits at once.
func appendGroups(dst []byte, rng *rand.Rand, n int) []byte {
	for g := 0; g < n; g++ {
		if g > 0 {
			dst = append(dst, '-')
		}
		v := rng.Uint64N(100_000_000_000)
		var digits [groupDigits]byte
		for i := groupDigits - 1; i >= 0; i-- {
			digits[i] = byte('0' + v%10)
			v /= 10
		}
		dst = append(dst, digits[:]...)
	}
	return dst
}

// uniqueSeq stands for sysbench.rand.unique (sb_rand_unique): a sequence
// of distinct 32-bit numbers in random-looking order, shared by every
// client (oltp_insert without --auto-inc takes its ids from it). Like
// sysbench it walks a permutation of the 32-bit integers made of quadratic
// residues modulo the prime 4294967291 (≡ 3 mod 4, so x → x² mod p, folded,
// is a bijection below p), applied twice around a seeded offset; the
// starting index and the offset come from the run's seed. Segment i of N
// (--segment, --agents) takes every N-th index from i: the segments share
// the seed, so their numbers stay distinct.
type uniqueSeq struct {
	taken         atomic.Uint32 // numbers this process has taken
	start, offset uint32
	stride, shift uint32 // index = start + taken*stride + shift
}

const uniquePrime = 4294967291

func permute(x uint32) uint32 {
	if x >= uniquePrime {
		return x // the 5 integers above the prime map to themselves
	}
	r := uint32(uint64(x) * uint64(x) % uniquePrime)
	if x <= uniquePrime/2 {
		return r
	}
	return uniquePrime - r
}

// newUniqueSeq is the sequence of segment index of count (0 of 1: the
// whole run).
func newUniqueSeq(seed uint64, index, count int) *uniqueSeq {
	if count < 1 {
		index, count = 0, 1
	}
	return &uniqueSeq{start: permute(uint32(seed)), offset: permute(uint32(seed >> 32)),
		stride: uint32(count), shift: uint32(index)}
}

// next returns the next number of the sequence; safe for concurrent use.
func (u *uniqueSeq) next() uint32 {
	k := u.taken.Add(1) - 1
	return permute(permute(u.start+k*u.stride+u.shift) + u.offset)
}
