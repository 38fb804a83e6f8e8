package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// kind is the type of a pgbench value.
type kind uint8

const (
	kNone kind = iota // a variable set from text, not yet converted
	kNull
	kBool
	kInt
	kDouble
)

func (k kind) String() string {
	return [...]string{"none", "null", "boolean", "int", "double"}[k]
}

// value is pgbench's PgBenchValue: NULL, a boolean, a 64-bit integer or a
// double. A boolean is kept in i (0 or 1).
type value struct {
	k kind
	i int64
	f float64
}

func intVal(i int64) value      { return value{k: kInt, i: i} }
func doubleVal(f float64) value { return value{k: kDouble, f: f} }
func boolVal(b bool) value {
	if b {
		return value{k: kBool, i: 1}
	}
	return value{k: kBool}
}

// evalError is an error of evaluation, in pgbench's words.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &evalError{fmt.Sprintf(format, args...)} }

func (v value) toBool() (bool, error) {
	if v.k == kBool {
		return v.i != 0, nil
	}
	return false, errorf("cannot coerce %s to boolean", v.k)
}

// truth is pgbench's valueTruth for \if and CASE: NULL and zero are false.
func (v value) truth() bool {
	switch v.k {
	case kBool, kInt:
		return v.i != 0
	case kDouble:
		return v.f != 0
	}
	return false
}

func (v value) toInt() (int64, error) {
	switch v.k {
	case kInt:
		return v.i, nil
	case kDouble:
		d := math.RoundToEven(v.f) // rint
		if math.IsNaN(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0 {
			return 0, errorf("double to int overflow for %f", d)
		}
		return int64(d), nil
	}
	return 0, errorf("cannot coerce %s to int", v.k)
}

func (v value) toDouble() (float64, error) {
	switch v.k {
	case kDouble:
		return v.f, nil
	case kInt:
		return float64(v.i), nil
	}
	return 0, errorf("cannot coerce %s to double", v.k)
}

// appendText appends the value as pgbench writes it into SQL text and
// parameters (getVariable): integers in decimal, doubles as %.15g, NULL as
// "NULL", booleans as true/false.
func (v value) appendText(b []byte) []byte {
	switch v.k {
	case kInt:
		return strconv.AppendInt(b, v.i, 10)
	case kDouble:
		switch {
		case math.IsNaN(v.f):
			return append(b, "nan"...)
		case math.IsInf(v.f, 1):
			return append(b, "inf"...)
		case math.IsInf(v.f, -1):
			return append(b, "-inf"...)
		}
		return strconv.AppendFloat(b, v.f, 'g', 15, 64)
	case kBool:
		if v.i != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	}
	return append(b, "NULL"...)
}

// parseText converts a variable's text (from -D, \gset, \setshell) to a
// value as pgbench's makeVariableValue: null, boolean words and their
// prefixes, integers, else doubles.
func parseText(s string) (value, bool) {
	if s == "" {
		return value{}, false
	}
	ls := strings.ToLower(s)
	switch {
	case ls == "null":
		return value{k: kNull}, true
	case strings.HasPrefix("true", ls) || strings.HasPrefix("yes", ls) || ls == "on":
		return boolVal(true), true
	case strings.HasPrefix("false", ls) || strings.HasPrefix("no", ls) || ls == "off" || ls == "of":
		return boolVal(false), true
	}
	if isAnInt(s) {
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return value{}, false
		}
		return intVal(i), true
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return value{}, false
	}
	return doubleVal(f), true
}

// isAnInt is pgbench's is_an_int: optional spaces and sign, digits,
// trailing spaces.
func isAnInt(s string) bool {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return false
	}
	return strings.TrimRight(s[n:], " \t\n\r\f\v") == ""
}
