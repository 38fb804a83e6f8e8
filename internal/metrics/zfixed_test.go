package metrics

import (
	"bytes"
	"compress/zlib"
	"io"
	"math/rand/v2"
	"testing"
)

// TestZlibFixed: appendZlibFixed's streams inflate to their input: runs
// of every length around the match limits (3, 258), bytes on each side
// of the 8/9-bit code boundary (144), random payloads.
func TestZlibFixed(t *testing.T) {
	cases := [][]byte{nil, {0}, {143, 144, 255}}
	for _, n := range []int{2, 3, 4, 5, 11, 12, 257, 258, 259, 260, 300, 517, 518, 600} {
		for _, c := range []byte{0, 7, 143, 144, 255} {
			cases = append(cases, append(bytes.Repeat([]byte{c}, n), 1, c, c, c, c))
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 500 {
		b := make([]byte, r.IntN(200))
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = byte(r.IntN(256))
			} else if i > 0 {
				b[i] = b[i-1]
			}
		}
		cases = append(cases, b)
	}
	for i, raw := range cases {
		z := appendZlibFixed([]byte("x"), raw)
		zr, err := zlib.NewReader(bytes.NewReader(z[1:]))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("case %d (%d bytes): inflated %d bytes, %v", i, len(raw), len(got), err)
		}
	}
}
