package sampler

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

// The server sources read their results as the simple protocol sends
// them, text (protocol-flow.html, "Simple Query"), straight from
// pgconn: the few types they select (float8, int4, int8, text, bool) are
// parsed as pgx's text decoders parse them (strconv on the same text), so
// the figures are pgx's, without pgx's per-query scan plans.

// errNoRows: a result that must have one row had none.
var errNoRows = errors.New("no rows in result set")

// eachRow calls fn with the text values (nil: NULL) of each row of rr,
// which must have n columns, then closes rr: the statement's error if it
// failed, else fn's.
func eachRow(rr *pgconn.ResultReader, n int, fn func(vals [][]byte) error) error {
	var err error
	for err == nil && rr.NextRow() {
		vals := rr.Values()
		if len(vals) != n {
			err = fmt.Errorf("sampler: %d columns in a result, want %d", len(vals), n)
			break
		}
		err = fn(vals)
	}
	if _, cerr := rr.Close(); cerr != nil {
		return cerr
	}
	return err
}

// oneRow reads the one row of rr, whose columns are all float8, into dst:
// errNoRows when there is none.
func oneRow(rr *pgconn.ResultReader, dst []float64) error {
	rows := 0
	err := eachRow(rr, len(dst), func(vals [][]byte) error {
		rows++
		if rows > 1 {
			return nil // QueryRow's Scan reads the first row
		}
		return floats(vals, dst)
	})
	if err == nil && rows == 0 {
		return errNoRows
	}
	return err
}

// floats parses vals, float8 columns, into dst.
func floats(vals [][]byte, dst []float64) error {
	for i, v := range vals {
		var err error
		if dst[i], err = textFloat(v); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

// textFloat parses a float8 in text ("1.5", "NaN", "Infinity"), as pgx's
// pgtype.Float8 does; NULL is an error, as pgx's scan into a float64.
func textFloat(v []byte) (float64, error) {
	if v == nil {
		return 0, errNull
	}
	return strconv.ParseFloat(string(v), 64)
}

// textFloatOrNull parses a float8 that may be NULL (ok false).
func textFloatOrNull(v []byte) (f float64, ok bool, err error) {
	if v == nil {
		return 0, false, nil
	}
	f, err = strconv.ParseFloat(string(v), 64)
	return f, err == nil, err
}

// textInt parses an integer column of bits bits (int4: 32, int8: 64).
func textInt(v []byte, bits int) (int64, error) {
	if v == nil {
		return 0, errNull
	}
	return strconv.ParseInt(string(v), 10, bits)
}

// textBool parses a bool ("t" or "f").
func textBool(v []byte) (bool, error) {
	switch string(v) {
	case "t":
		return true, nil
	case "f":
		return false, nil
	case "":
		if v == nil {
			return false, errNull
		}
	}
	return false, fmt.Errorf("invalid bool %q", v)
}

// textString is a text column; NULL is an error, as pgx's scan into a string.
func textString(v []byte) (string, error) {
	if v == nil {
		return "", errNull
	}
	return string(v), nil
}

var errNull = errors.New("cannot scan NULL")
