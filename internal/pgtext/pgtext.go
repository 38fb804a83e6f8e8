// Package pgtext runs pgarena's own statements (server description,
// workload preparation and checks) on a connection of pgconn alone, with
// parameters and results in text format. A *pgx.Conn builds pgx's type
// map as it connects (pgtype's default map: its code's pages and some
// 150 KB of heap); a run whose clients are pgconn connections
// (workload.Meta.PgConnOnly) does without it by using Conn as its control
// connection. Querier is what both offer, so the statements are written
// once.
//
// Conn converts only what those statements pass and read: arguments
// string, []string, bool, integers, float64 and nil; results into
// *string, *bool, integers and *float64 (NULL is an error, as in pgx).
// Anything else is an error naming the type, never a guess.
package pgtext

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// Querier runs statements: a *pgx.Conn, or a *Conn.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

var (
	_ Querier = (*pgx.Conn)(nil)
	_ Querier = (*Conn)(nil)
)

// Conn is a Querier on a pgconn connection, in text format.
type Conn struct{ pc *pgconn.PgConn }

// New wraps pc; closing the Conn closes pc.
func New(pc *pgconn.PgConn) *Conn { return &Conn{pc: pc} }

// PgConn is the underlying connection.
func (c *Conn) PgConn() *pgconn.PgConn { return c.pc }

// Close closes the connection.
func (c *Conn) Close(ctx context.Context) error { return c.pc.Close(ctx) }

// Exec runs sql: without arguments by the simple protocol (sql may hold
// several statements), with them as one extended-protocol statement.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if len(args) == 0 {
		res, err := c.pc.Exec(ctx, sql).ReadAll()
		if err != nil {
			return pgconn.CommandTag{}, err
		}
		if len(res) == 0 {
			return pgconn.CommandTag{}, nil
		}
		return res[len(res)-1].CommandTag, nil
	}
	params, err := encode(args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return c.pc.ExecParams(ctx, sql, params, nil, nil, nil).Close()
}

// Query runs sql with args; the rows must be closed (or read to the end).
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	params, err := encode(args)
	if err != nil {
		return nil, err
	}
	return &rows{rr: c.pc.ExecParams(ctx, sql, params, nil, nil, nil)}, nil
}

// QueryRow runs sql with args; Scan reads its first row (pgx.ErrNoRows
// without one).
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	r, err := c.Query(ctx, sql, args...)
	return row{r: r, err: err}
}

type row struct {
	r   pgx.Rows
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.r.Close()
	if !r.r.Next() {
		if err := r.r.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.r.Scan(dest...); err != nil {
		return err
	}
	r.r.Close()
	return r.r.Err()
}

// rows implements pgx.Rows on a pgconn result in text format.
type rows struct {
	rr     *pgconn.ResultReader
	tag    pgconn.CommandTag
	err    error
	closed bool
}

func (r *rows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	tag, err := r.rr.Close()
	r.tag = tag
	if r.err == nil {
		r.err = err
	}
}

func (r *rows) Err() error                                   { return r.err }
func (r *rows) CommandTag() pgconn.CommandTag                { return r.tag }
func (r *rows) FieldDescriptions() []pgconn.FieldDescription { return r.rr.FieldDescriptions() }
func (r *rows) RawValues() [][]byte                          { return r.rr.Values() }
func (r *rows) Conn() *pgx.Conn                              { return nil }
func (r *rows) TypeMap() *pgtype.Map                         { return nil }

func (r *rows) Next() bool {
	if r.closed {
		return false
	}
	if r.rr.NextRow() {
		return true
	}
	r.Close()
	return false
}

// Values returns the row's values as strings (nil for NULL).
func (r *rows) Values() ([]any, error) {
	raw := r.rr.Values()
	out := make([]any, len(raw))
	for i, v := range raw {
		if v != nil {
			out[i] = string(v)
		}
	}
	return out, nil
}

func (r *rows) Scan(dest ...any) error {
	raw := r.rr.Values()
	if len(dest) != len(raw) {
		err := fmt.Errorf("number of field descriptions must equal number of destinations, got %d and %d", len(raw), len(dest))
		r.fail(err)
		return err
	}
	for i, d := range dest {
		if err := scan(raw[i], d); err != nil {
			err = fmt.Errorf("can't scan into dest[%d] (col: %s): %w", i, r.rr.FieldDescriptions()[i].Name, err)
			r.fail(err)
			return err
		}
	}
	return nil
}

func (r *rows) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.Close()
}

// scan converts one text value into dest.
func scan(v []byte, dest any) error {
	if dest == nil { // pgx: a nil destination skips the column
		return nil
	}
	if v == nil {
		return fmt.Errorf("cannot scan NULL into %T", dest)
	}
	s := string(v)
	var err error
	switch d := dest.(type) {
	case *string:
		*d = s
	case *bool:
		switch s {
		case "t":
			*d = true
		case "f":
			*d = false
		default:
			err = fmt.Errorf("invalid boolean %q", s)
		}
	case *int:
		*d, err = strconv.Atoi(s)
	case *int16:
		var n int64
		n, err = strconv.ParseInt(s, 10, 16)
		*d = int16(n)
	case *int32:
		var n int64
		n, err = strconv.ParseInt(s, 10, 32)
		*d = int32(n)
	case *int64:
		*d, err = strconv.ParseInt(s, 10, 64)
	case *float64:
		*d, err = strconv.ParseFloat(s, 64)
	default:
		return fmt.Errorf("pgtext: cannot scan into %T", dest)
	}
	return err
}

// encode converts arguments to text parameters.
func encode(args []any) ([][]byte, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make([][]byte, len(args))
	for i, a := range args {
		var s string
		switch v := a.(type) {
		case nil:
			continue
		case string:
			s = v
		case []string:
			s = textArray(v)
		case bool:
			s = "f"
			if v {
				s = "t"
			}
		case int:
			s = strconv.Itoa(v)
		case int32:
			s = strconv.FormatInt(int64(v), 10)
		case int64:
			s = strconv.FormatInt(v, 10)
		case float64:
			s = strconv.FormatFloat(v, 'g', -1, 64)
		default:
			return nil, errors.New("pgtext: cannot send a " + fmt.Sprintf("%T", a))
		}
		out[i] = []byte(s)
	}
	return out, nil
}

// textArray is the text form of a one-dimensional array of strings, every
// element quoted (so none reads as NULL).
func textArray(v []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range []byte(s) {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}
