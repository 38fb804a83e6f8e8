package tpcc

import (
	"math/rand/v2"

	"github.com/pgarena/pgarena/internal/randgen"
)

// constants are the run-time constants C of NURand (clause 2.1.6): one per
// field, chosen once. The load uses cLastLoad for C_LAST; a run uses
// cLastRun, which differs from it by a delta in [65, 119] other than 96
// and 112 (clause 2.1.6.1), so that the run's hot last names are not the
// load's. C_ID and C_OL_I_ID may be the same at load and run (2.1.6.1).
type constants struct {
	cLastLoad, cLastRun, cID, cOLIID int64
}

// constantsFor derives the constants from a seed.
func constantsFor(seed uint64) constants {
	rng := rand.New(rand.NewPCG(seed, 0x7470_6363_4e55_5241)) // "tpccNURA"
	c := constants{
		cLastLoad: randgen.Uniform(rng, 0, 255),
		cID:       randgen.Uniform(rng, 0, 1023),
		cOLIID:    randgen.Uniform(rng, 0, 8191),
	}
	c.cLastRun = runCLast(c.cLastLoad, seed)
	return c
}

// runCLast returns a run's C for C_LAST given the load's: at a distance
// drawn (from seed) in [65, 119] other than 96 and 112 (clause 2.1.6.1),
// and within [0, 255].
func runCLast(load int64, seed uint64) int64 {
	rng := rand.New(rand.NewPCG(seed, 0x7470_6363_4465_6c74)) // "tpccDelt"
	var deltas []int64
	for d := int64(65); d <= 119; d++ {
		if d != 96 && d != 112 {
			deltas = append(deltas, d)
		}
	}
	d := deltas[rng.IntN(len(deltas))]
	if load+d <= 255 {
		return load + d
	}
	return load - d // load > 255-d ≥ 136 > d
}

// syllables of customer last names (clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastName returns the last name for a number in [0, 999] (clause 4.3.2.3).
func lastName(n int64) string {
	return syllables[n/100] + syllables[n/10%10] + syllables[n%10]
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// aString returns a random a-string (clause 4.3.2.2) of length in [lo, hi].
func aString(rng *rand.Rand, lo, hi int) string {
	b := make([]byte, lo+rng.IntN(hi-lo+1))
	fillAlnum(rng, b)
	return string(b)
}

// fillAlnum fills b with random alphanumeric characters, 10 per 64-bit draw.
func fillAlnum(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); {
		r := rng.Uint64()
		for k := 0; k < 10 && i < len(b); k++ {
			b[i] = alnum[(r&63)%62]
			r >>= 6
			i++
		}
	}
}

// nString returns a random n-string (digits) of length n.
func nString(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + rng.IntN(10))
	}
	return string(b)
}

// zip is a zip code per clause 4.3.2.7: 4 random digits then "11111".
func zip(rng *rand.Rand) string { return nString(rng, 4) + "11111" }

// state is two random letters.
func state(rng *rand.Rand) string {
	return string([]byte{alnum[rng.IntN(26)], alnum[rng.IntN(26)]})
}

// dataString is i_data or s_data: an a-string of 26..50 characters, 10%
// of which contain "ORIGINAL" at a random position (clause 4.3.3.1).
func dataString(rng *rand.Rand) string {
	b := make([]byte, 26+rng.IntN(25))
	fillAlnum(rng, b)
	if rng.IntN(10) == 0 {
		copy(b[rng.IntN(len(b)-8+1):], "ORIGINAL")
	}
	return string(b)
}
