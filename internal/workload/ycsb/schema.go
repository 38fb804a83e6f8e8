package ycsb

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/pgarena/pgarena/internal/workload"
)

// table is YCSB's default table name (CoreWorkload's "table" property).
const table = "usertable"

// batchRows is the number of rows per load batch: about 4 MB at the
// default 1 KB rows.
const batchRows = 4096

// loadMark starts the comment init puts on usertable.ycsb_key: the
// parameters the data was loaded with, read back by Prepare.
const loadMark = "pgarena ycsb load:"

// keyName is CoreWorkload.buildKeyName: "user" and the decimal key
// number, hashed by FNV-64 first in hashed insert order (the default) so
// that consecutive inserts land all over the key range, left-padded with
// zeros to pad digits (YCSB's zeropadding; its default 1 pads nothing).
func keyName(dst []byte, keynum int64, hashed bool, pad int) []byte {
	if hashed {
		keynum = fnv64(keynum)
	}
	dst = append(dst, "user"...)
	if pad > 1 {
		var digits [20]byte
		n := len(strconv.AppendInt(digits[:0], keynum, 10))
		for range pad - n {
			dst = append(dst, '0')
		}
	}
	return strconv.AppendInt(dst, keynum, 10)
}

// valueChars are the bytes field values are made of: 64 printable ASCII
// characters, so that 6 random bits pick one.
const valueChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// fillValue writes n random characters of valueChars drawn from next.
func fillValue(dst []byte, n int, next func() uint64) []byte {
	for n > 0 {
		r := next()
		for j := 0; j < 10 && n > 0; j++ {
			dst = append(dst, valueChars[r&63])
			r >>= 6
			n--
		}
	}
	return dst
}

// columns lists usertable's columns: ycsb_key, field0..field{count-1}.
func columns(fieldCount int) []string {
	cols := []string{"ycsb_key"}
	for i := range fieldCount {
		cols = append(cols, "field"+strconv.Itoa(i))
	}
	return cols
}

// Tables implements workload.Workload: usertable as YCSB's JDBC binding
// creates it, "CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY,
// FIELD0 TEXT, ..., FIELD9 TEXT)" (unquoted, so PostgreSQL folds the names
// to lower case), with the primary key added after the load. Row k (k =
// 0..records-1, or the --insert-start/--insert-count range) has the key
// keyName(k) and field-count values of the field length distribution's
// lengths, a pure function of (--seed, k); with --data-integrity the
// values are YCSB's deterministic ones, a function of key and field.
func (w *Workload) Tables() []workload.Table {
	var ddl strings.Builder
	ddl.WriteString("CREATE TABLE " + table + " (YCSB_KEY VARCHAR(255) NOT NULL")
	for i := range w.fieldCount {
		fmt.Fprintf(&ddl, ", FIELD%d TEXT", i)
	}
	ddl.WriteString(")")
	mark := w.mark()
	return []workload.Table{{
		Name:    table,
		Create:  []string{ddl.String()},
		Columns: columns(w.fieldCount),
		Rows:    w.rows(),
		PostLoad: []string{
			"ALTER TABLE " + table + " ADD PRIMARY KEY (YCSB_KEY)",
			"COMMENT ON COLUMN " + table + ".ycsb_key IS '" + mark + "'",
		},
	}}
}

// rows generates the load: batch i holds key numbers insertStart +
// i*batchRows onwards. Each row's lengths and values come from a PCG
// seeded with (seed, key number) alone, so a row is the same whichever
// batch, slice, order or connection makes it. A constant length draws
// nothing (the lengths of the other distributions are drawn first).
func (w *Workload) rows() workload.Batches {
	start, total := int64(w.insertStart), int64(w.insertCount)
	seed, fields := w.seed, w.fieldCount
	hashed, pad, integrity := w.insertOrder == orderHashed, w.zeroPadding, w.integrity
	lengths := newFieldLengths(w.lengthDist, w.minFieldLength, w.fieldLength)
	width := fields + 1
	return workload.Batches{
		N:    int((total + batchRows - 1) / batchRows),
		Rows: total,
		Fill: func(i int, dst [][]any) [][]any {
			first := start + int64(i)*batchRows
			last := min(first+batchRows, start+total)
			dst = dst[:0]
			var buf []byte
			var pcg rand.PCG
			rng := rand.New(&pcg)
			sizes := make([]int, fields)
			for k := first; k < last; k++ {
				r := workload.NextRow(dst, width)
				buf = keyName(buf[:0], k, hashed, pad)
				key := string(buf)
				r[0] = key
				pcg.Seed(seed, uint64(k))
				sum := 0
				for f := range sizes {
					sizes[f] = lengths.next(rng)
					sum += sizes[f]
				}
				buf = buf[:0]
				if integrity {
					for f, n := range sizes {
						buf = appendIntegrityValue(buf, key, f, n)
					}
				} else {
					buf = fillValue(buf, sum, pcg.Uint64)
				}
				all := string(buf) // one allocation; the fields share it
				off := 0
				for f, n := range sizes {
					r[f+1] = all[off : off+n]
					off += n
				}
				dst = append(dst, r)
			}
			return dst
		},
	}
}
