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

// keyName is CoreWorkload.buildKeyName without zero padding (YCSB's
// default zeropadding 1): "user" and the decimal key number, hashed by
// FNV-64 first in hashed insert order (the default) so that consecutive
// inserts land all over the key range.
func keyName(dst []byte, keynum int64, hashed bool) []byte {
	if hashed {
		keynum = fnv64(keynum)
	}
	return strconv.AppendInt(append(dst, "user"...), keynum, 10)
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
// 0..records-1) has the key keyName(k) and field-count values of
// field-length characters, a pure function of (--seed, k).
func (w *Workload) Tables() []workload.Table {
	var ddl strings.Builder
	ddl.WriteString("CREATE TABLE " + table + " (YCSB_KEY VARCHAR(255) NOT NULL")
	for i := range w.fieldCount {
		fmt.Fprintf(&ddl, ", FIELD%d TEXT", i)
	}
	ddl.WriteString(")")
	mark := fmt.Sprintf("%s records=%d insert_order=%s field_length=%d", loadMark, w.records, w.insertOrder, w.fieldLength)
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

// rows generates the load: batch i holds key numbers i*batchRows onwards.
// Each row's values come from a PCG seeded with (seed, key number) alone,
// so a row is the same whichever batch, order or connection makes it.
func (w *Workload) rows() workload.Batches {
	total := int64(w.records)
	seed, fields, length := w.seed, w.fieldCount, w.fieldLength
	hashed := w.insertOrder == orderHashed
	width := fields + 1
	return workload.Batches{
		N:    int((total + batchRows - 1) / batchRows),
		Rows: total,
		Fill: func(i int, dst [][]any) [][]any {
			first := int64(i) * batchRows
			last := min(first+batchRows, total)
			dst = dst[:0]
			var buf []byte
			var pcg rand.PCG
			for k := first; k < last; k++ {
				r := workload.NextRow(dst, width)
				r[0] = string(keyName(buf[:0], k, hashed))
				pcg.Seed(seed, uint64(k))
				buf = fillValue(buf[:0], fields*length, pcg.Uint64)
				all := string(buf) // one allocation; the fields share it
				for f := range fields {
					r[f+1] = all[f*length : (f+1)*length]
				}
				dst = append(dst, r)
			}
			return dst
		},
	}
}
