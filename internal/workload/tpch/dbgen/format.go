package dbgen

import (
	"io"
	"strconv"
	"time"

	"github.com/pgarena/pgarena/internal/lazy"
)

// lineWriter accumulates lines and flushes them to w in large writes.
type lineWriter struct {
	w     io.Writer
	buf   []byte
	f     Format
	lines int64
	err   error
	dates *[totalDates][10]byte
}

const flushAt = 256 << 10

func newLineWriter(w io.Writer, f Format) *lineWriter {
	return &lineWriter{w: w, f: f, buf: make([]byte, 0, flushAt+4096), dates: dates.Get()}
}

func (lw *lineWriter) str(s string) { lw.buf = append(append(lw.buf, s...), '|') }
func (lw *lineWriter) int(v int64)  { lw.buf = append(strconv.AppendInt(lw.buf, v, 10), '|') }
func (lw *lineWriter) byte(b byte)  { lw.buf = append(lw.buf, b, '|') }

// money writes a value in cents as dbgen's "%.2f" prints it.
func (lw *lineWriter) money(cents int64) {
	if cents < 0 {
		lw.buf = append(lw.buf, '-')
		cents = -cents
	}
	lw.buf = strconv.AppendInt(lw.buf, cents/100, 10)
	c := cents % 100
	lw.buf = append(lw.buf, '.', byte('0'+c/10), byte('0'+c%10), '|')
}

// padded writes prefix and v zero-padded to 9 digits (dbgen's "%09ld" names).
func (lw *lineWriter) padded(prefix string, v int64) {
	lw.buf = append(lw.buf, prefix...)
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], v, 10)
	for i := len(d); i < 9; i++ {
		lw.buf = append(lw.buf, '0')
	}
	lw.buf = append(append(lw.buf, d...), '|')
}

func (lw *lineWriter) date(d int32) { lw.buf = append(append(lw.buf, lw.dates[d-minDate][:]...), '|') }

// end finishes a line: TBL keeps the trailing '|', COPY drops it.
func (lw *lineWriter) end() {
	if lw.f == COPY {
		lw.buf = lw.buf[:len(lw.buf)-1]
	}
	lw.buf = append(lw.buf, '\n')
	lw.lines++
	if len(lw.buf) >= flushAt {
		lw.flush()
	}
}

func (lw *lineWriter) flush() {
	if lw.err == nil && len(lw.buf) > 0 {
		_, lw.err = lw.w.Write(lw.buf)
	}
	lw.buf = lw.buf[:0]
}

// Dates (Clause 4.2.2.x): dbgen numbers days from 92001 (1992-01-01) over 2557 days, to
// 1998-12-31; a date is "in the past" if it is on or before CURRENTDATE, 1995-06-17.
const (
	minDate    = 92001
	totalDates = 2557
	pastDate   = minDate + 1263 // 1995-06-17
)

// dates are the days' texts, built on first use (not at package initialisation: ~2 M
// instructions that every pgarena command would pay).
var dates = lazy.Value[*[totalDates][10]byte]{New: buildDates}

func buildDates() *[totalDates][10]byte {
	out := new([totalDates][10]byte)
	start := time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		copy(out[i][:], start.AddDate(0, 0, i).Format("2006-01-02"))
	}
	return out
}
