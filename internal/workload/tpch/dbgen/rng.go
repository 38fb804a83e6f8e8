package dbgen

// TPC-H's random numbers (Clause 4.2.2.x; dbgen's rnd.c): every column has its own
// Park–Miller stream (seed' = seed × 16807 mod 2^31−1) that consumes a fixed number of
// draws per row, so row r of any column starts at a known position reached by skip-ahead.
// That is what makes a chunk of rows a pure function of its first row.

const (
	rngMultiplier = 16807
	rngModulus    = 2147483647
)

// stream is one column's random stream.
type stream struct {
	seed   int64
	used   int32
	perRow int32
}

func newStream(seed int64, perRow int32) stream { return stream{seed: seed, perRow: perRow} }

// intn returns a uniform value in [lo, hi] the way dbgen's UnifInt does, including its
// 32-bit range arithmetic (the range of [0, 2^31−1] wraps to −2^31, as in dbgen).
func (s *stream) intn(lo, hi int32) int32 {
	s.seed = s.seed * rngMultiplier % rngModulus
	s.used++
	span := float64(hi - lo + 1) // int32 arithmetic: wraps like dbgen's
	return lo + int32(float64(s.seed)/rngModulus*span)
}

// rowDone skips the draws the row did not use: every row consumes perRow draws.
func (s *stream) rowDone() {
	s.skip(int64(s.perRow - s.used))
	s.used = 0
}

// skipRows moves the stream forward by rows whole rows.
func (s *stream) skipRows(rows int64) {
	if s.used != 0 {
		s.rowDone()
	}
	s.skip(int64(s.perRow) * rows)
}

// skip advances the stream by n draws: seed × 16807^n mod 2^31−1, by repeated squaring.
func (s *stream) skip(n int64) {
	m := int64(rngMultiplier)
	for n > 0 {
		if n&1 != 0 {
			s.seed = m * s.seed % rngModulus
		}
		n >>= 1
		m = m * m % rngModulus
	}
}
