package qgen

// The random number generator of TPC-H's dbgen/qgen (rnd.c): Park and
// Miller's "minimum standard" generator, one stream per query. qgen seeds
// stream 0 with its -r seed and stream q (1..22) with the q-th successor
// of it; query q draws all its parameters from stream q, in varsub.c's
// order. Reproducing that arithmetic exactly makes Stream's parameters
// the ones `qgen -r seed` prints.

const (
	rngModulus    = 2147483647 // 2^31 - 1
	rngMultiplier = 16807
)

// nextRand is dbgen's NextRand.
func nextRand(seed int64) int64 { return seed * rngMultiplier % rngModulus }

// streams are the 23 generator states of one qgen run (0 and one per query).
type streams [23]int64

// newStreams seeds the streams as qgen's main does for -r seed. Seeds are
// taken modulo 2^31-1 first (qgen adds 2^31-1 to a negative seed; for every
// seed it handles, the successors are the same). A multiple of 2^31-1
// would make every draw its range's minimum and qgen loop forever on Q7's
// distinct nations; it is taken as 1 instead.
func newStreams(seed int64) *streams {
	s := new(streams)
	r := seed % rngModulus
	if r < 0 {
		r += rngModulus
	}
	if r == 0 {
		r = 1
	}
	s[0] = r
	for i := 1; i < len(s); i++ {
		s[0] = nextRand(s[0])
		s[i] = s[0]
	}
	return s
}

// unifInt is dbgen's UnifInt: an integer in [low, high] from stream q.
func (s *streams) unifInt(low, high int64, q int) int64 {
	s[q] = nextRand(s[q])
	return low + int64(float64(s[q])/float64(rngModulus)*float64(high-low+1))
}

// dist is a dists.dss distribution: members with cumulative weights.
type dist struct {
	names   []string
	weights []int64 // cumulative
}

// pick is dbgen's pick_str: the member whose cumulative weight first
// reaches a uniform draw in [1, total]; it returns the member's index.
func (s *streams) pick(d dist, q int) (string, int) {
	j := s.unifInt(1, d.weights[len(d.weights)-1], q)
	i := 0
	for d.weights[i] < j {
		i++
	}
	return d.names[i], i
}

// permute is dbgen's permute: a Fisher-Yates shuffle of a in place, drawn
// from stream q.
func (s *streams) permute(a []int64, q int) {
	for i := range a {
		j := s.unifInt(int64(i), int64(len(a)-1), q)
		a[i], a[j] = a[j], a[i]
	}
}
