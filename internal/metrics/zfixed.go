package metrics

import (
	"encoding/binary"
	"hash/adler32"
	"math/bits"
)

// A small V2 payload (a tick's histogram: a 40-byte header, mostly zero
// bytes, and a few dozen bytes of counts) goes into its zlib stream with
// deflate's fixed Huffman codes (RFC 1951 3.2.6), each run of a repeated
// byte as the byte and a match at distance 1. compress/flate's
// Huffman-only encoder builds a code for the block first, ~55k
// instructions however short the input, and its output for these
// payloads is often a stored block anyway; this writes them in ~2k
// instructions, and smaller (36-40 bytes for an interval of 0 or 1
// transaction, 81 for 85 bytes of payload, against 45-50 and 92). Any
// zlib reader decodes both.

// fixedMax is the largest payload written with fixed codes; larger ones
// gain from a code of their own (compress/flate).
const fixedMax = 128

// lengthBase and lengthExtra are deflate's length codes 257-285: the
// shortest match length of each and its count of extra bits.
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
)

// bitWriter appends bits to b, least significant first (RFC 1951 3.1.1).
type bitWriter struct {
	b   []byte
	acc uint64
	n   uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.n
	for w.n += n; w.n >= 8; w.n -= 8 {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
	}
}

// code writes a Huffman code of n bits, most significant bit first.
func (w *bitWriter) code(c uint16, n uint) { w.bits(uint64(bits.Reverse16(c)>>(16-n)), n) }

// symbol writes literal/length symbol v with its fixed code.
func (w *bitWriter) symbol(v int) {
	switch {
	case v < 144:
		w.code(uint16(0x30+v), 8)
	case v < 256:
		w.code(uint16(0x190+v-144), 9)
	case v < 280:
		w.code(uint16(v-256), 7)
	default:
		w.code(uint16(0xc0+v-280), 8)
	}
}

// match writes a match of length n (3-258) at distance 1.
func (w *bitWriter) match(n int) {
	i := len(lengthBase) - 1
	for int(lengthBase[i]) > n {
		i--
	}
	w.symbol(257 + i)
	w.bits(uint64(n-int(lengthBase[i])), uint(lengthExtra[i]))
	w.code(0, 5) // distance code 0: distance 1, no extra bits
}

// appendZlibFixed appends raw as a zlib stream (RFC 1950) of one deflate
// block with fixed codes.
func appendZlibFixed(dst, raw []byte) []byte {
	dst = append(dst, 0x78, 0x01) // deflate, 32 KB window, no dictionary; a multiple of 31
	w := bitWriter{b: dst}
	w.bits(1, 1) // BFINAL
	w.bits(1, 2) // BTYPE 01: fixed codes
	for i := 0; i < len(raw); {
		c := raw[i]
		n := 1
		for i+n < len(raw) && raw[i+n] == c && n < 259 {
			n++
		}
		w.symbol(int(c))
		if n-1 >= 3 {
			w.match(n - 1)
			i += n
		} else {
			i++
		}
	}
	w.symbol(256) // end of block
	w.bits(0, 7)  // to a byte boundary
	return binary.BigEndian.AppendUint32(w.b, adler32.Checksum(raw))
}
