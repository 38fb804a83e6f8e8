package loader

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgarena/pgarena/internal/workload"
)

// copyChunk is how much encoded data the reader prepares before handing it
// to pgconn, which sends it in CopyData messages of up to 64 KiB.
const copyChunk = 256 << 10

// copyTable streams batches of t, claimed one at a time with next, into
// one binary COPY on conn. With freeze, the COPY is FREEZE and the caller
// must have created or truncated t in the current transaction.
func copyTable(ctx context.Context, conn *pgx.Conn, t *workload.Table, freeze bool, next func() (int, bool), idx int, progress Progress) (int64, error) {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = pgx.Identifier{c}.Sanitize()
	}
	colList := strings.Join(cols, ", ")
	sd, err := conn.PgConn().Prepare(ctx, "", "select "+colList+" from "+t.Name, nil)
	if err != nil {
		return 0, fmt.Errorf("describe columns: %w", err)
	}
	enc := &rowEncoder{m: conn.TypeMap(), cols: make([]column, len(sd.Fields))}
	for i, f := range sd.Fields {
		enc.cols[i].oid = f.DataTypeOID
	}
	opts := "format binary"
	r := &copyReader{ctx: ctx, fill: t.Rows.Fill, text: t.Rows.Text, next: next, enc: enc, progress: progress, idx: idx,
		buf: append(make([]byte, 0, copyChunk+64<<10), "PGCOPY\n\377\r\n\000\000\000\000\000\000\000\000\000"...)}
	if r.text != nil {
		opts, r.buf = "format text, delimiter '|'", r.buf[:0]
	}
	if freeze {
		opts += ", freeze"
	}
	tag, err := conn.PgConn().CopyFrom(ctx, r, "copy "+t.Name+" ("+colList+") from stdin with ("+opts+")")
	// pgconn reads r on its own goroutine and, when the context is
	// cancelled, may return before that goroutine has: read its results
	// through the synchronised accessors only.
	if rerr := r.failure(); rerr != nil {
		// pgconn reports our error as the server's "COPY from stdin
		// failed"; return the original.
		return r.rows.Load(), rerr
	}
	if err != nil {
		return r.rows.Load(), err
	}
	return tag.RowsAffected(), nil
}

// copyReader is the io.Reader pgconn's CopyFrom pulls binary COPY data
// from. It generates one batch at a time into a reused buffer, so a table
// is never held in memory, and many batches go into one COPY.
type copyReader struct {
	ctx      context.Context
	fill     func(int, [][]any) [][]any
	text     func(int, []byte) ([]byte, int64, error) // Batches.Text: COPY text lines
	next     func() (int, bool)
	enc      *rowEncoder
	progress Progress
	idx      int // the table's index for progress

	batch [][]any
	buf   []byte
	off   int
	done  bool

	mu   sync.Mutex
	err  error        // guarded by mu
	rows atomic.Int64 // rows encoded so far
}

// failure returns the error that stopped the reader, if any.
func (r *copyReader) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *copyReader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.done {
			return 0, io.EOF
		}
		if err := r.refill(); err != nil {
			r.mu.Lock()
			r.err = err
			r.mu.Unlock()
			return 0, err
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// refill encodes batches into buf until it holds copyChunk bytes or the
// batches run out.
func (r *copyReader) refill() error {
	r.buf, r.off = r.buf[:0], 0
	for len(r.buf) < copyChunk {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		i, ok := r.next()
		if !ok {
			if r.text == nil {
				r.buf = append(r.buf, 0xff, 0xff) // file trailer
			}
			r.done = true
			return nil
		}
		if r.text != nil {
			var n int64
			var err error
			if r.buf, n, err = r.text(i, r.buf); err != nil {
				return fmt.Errorf("batch %d: %w", i, err)
			}
			r.count(n)
			continue
		}
		r.batch = r.fill(i, r.batch)
		for _, row := range r.batch {
			var err error
			if r.buf, err = r.enc.appendRow(r.buf, row); err != nil {
				return fmt.Errorf("batch %d: %w", i, err)
			}
		}
		r.count(int64(len(r.batch)))
	}
	return nil
}

// count adds n rows encoded to the reader's and the progress's counts.
func (r *copyReader) count(n int64) {
	r.rows.Add(n)
	if r.progress != nil {
		r.progress.Add(r.idx, n)
	}
}

// column caches how to encode one column: its type OID and the pgtype plan
// for the Go type last seen in it.
type column struct {
	oid  uint32
	typ  reflect.Type
	plan pgtype.EncodePlan
}

// rowEncoder writes rows in PostgreSQL's binary COPY format. The common
// cases (integers, strings, floats, booleans into the matching column
// types) are encoded directly; everything else goes through pgx's type
// map with the plan cached per column, as pgx's CopyFrom would encode it.
type rowEncoder struct {
	m    *pgtype.Map
	cols []column
}

func (e *rowEncoder) appendRow(buf []byte, row []any) ([]byte, error) {
	if len(row) != len(e.cols) {
		return buf, fmt.Errorf("row has %d values for %d columns", len(row), len(e.cols))
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(row)))
	for i, v := range row {
		var err error
		if buf, err = e.appendValue(buf, &e.cols[i], v); err != nil {
			return buf, fmt.Errorf("column %d: %w", i+1, err)
		}
	}
	return buf, nil
}

func (e *rowEncoder) appendValue(buf []byte, c *column, v any) ([]byte, error) {
	if v == nil {
		return binary.BigEndian.AppendUint32(buf, math.MaxUint32), nil // -1: NULL
	}
	switch c.oid {
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID:
		if n, ok := asInt64(v); ok {
			return appendInt(buf, c.oid, n)
		}
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID:
		switch s := v.(type) {
		case string:
			buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
			return append(buf, s...), nil
		case []byte:
			buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
			return append(buf, s...), nil
		}
	case pgtype.Float8OID:
		if f, ok := v.(float64); ok {
			buf = binary.BigEndian.AppendUint32(buf, 8)
			return binary.BigEndian.AppendUint64(buf, math.Float64bits(f)), nil
		}
	case pgtype.BoolOID:
		if b, ok := v.(bool); ok {
			buf = binary.BigEndian.AppendUint32(buf, 1)
			if b {
				return append(buf, 1), nil
			}
			return append(buf, 0), nil
		}
	}
	return e.appendGeneric(buf, c, v)
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int16:
		return int64(n), true
	case int8:
		return int64(n), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	}
	return 0, false
}

func appendInt(buf []byte, oid uint32, n int64) ([]byte, error) {
	switch oid {
	case pgtype.Int2OID:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return buf, fmt.Errorf("%d is out of range for smallint", n)
		}
		buf = binary.BigEndian.AppendUint32(buf, 2)
		return binary.BigEndian.AppendUint16(buf, uint16(n)), nil
	case pgtype.Int4OID:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return buf, fmt.Errorf("%d is out of range for integer", n)
		}
		buf = binary.BigEndian.AppendUint32(buf, 4)
		return binary.BigEndian.AppendUint32(buf, uint32(n)), nil
	default:
		buf = binary.BigEndian.AppendUint32(buf, 8)
		return binary.BigEndian.AppendUint64(buf, uint64(n)), nil
	}
}

// appendGeneric encodes v with pgx's type map, as pgx's CopyFrom does,
// including its fallback for strings given for non-text columns (parsed
// as the column type's text form).
func (e *rowEncoder) appendGeneric(buf []byte, c *column, v any) ([]byte, error) {
	if t := reflect.TypeOf(v); t != c.typ {
		c.typ, c.plan = t, e.m.PlanEncode(c.oid, pgtype.BinaryFormatCode, v)
	}
	sp := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, 0)
	var out []byte
	var err error
	if c.plan != nil {
		out, err = c.plan.Encode(v, buf)
	}
	if c.plan == nil || err != nil {
		s, ok := v.(string)
		dt, known := e.m.TypeForOID(c.oid)
		if !ok || !known {
			if err == nil {
				err = fmt.Errorf("cannot encode %T for type OID %d", v, c.oid)
			}
			return buf[:sp], err
		}
		val, derr := dt.Codec.DecodeValue(e.m, c.oid, pgtype.TextFormatCode, []byte(s))
		if derr != nil {
			return buf[:sp], derr
		}
		if out, err = e.m.Encode(c.oid, pgtype.BinaryFormatCode, val, buf); err != nil {
			return buf[:sp], err
		}
	}
	if out == nil { // NULL
		return binary.BigEndian.AppendUint32(buf[:sp], math.MaxUint32), nil
	}
	binary.BigEndian.PutUint32(out[sp:], uint32(len(out)-sp-4))
	return out, nil
}
