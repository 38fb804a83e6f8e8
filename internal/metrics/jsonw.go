package metrics

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/pgerr"
)

// JSONWriter writes a JSON document by hand, byte for byte what
// encoding/json writes for the same values, without its reflection: the
// first use of a struct type there costs ~0.1 M instructions per type, and
// a run writes each of its files once. Summary, Interval and the store's
// run files use it; their tests compare it with encoding/json.
//
// A separator is added before each key and array element unless the
// document is at the start of an object or array. The first error (a
// non-finite number, a time outside years 0-9999) is kept in Err.
type JSONWriter struct {
	B   []byte
	Err error
}

// sep writes the comma before a member or element, unless one opens here.
func (w *JSONWriter) sep() {
	if n := len(w.B); n > 0 {
		switch w.B[n-1] {
		case '{', '[', ':':
		default:
			w.B = append(w.B, ',')
		}
	}
}

// Open starts an object.
func (w *JSONWriter) Open() { w.sep(); w.B = append(w.B, '{') }

// Close ends an object.
func (w *JSONWriter) Close() { w.B = append(w.B, '}') }

// OpenArray starts an array.
func (w *JSONWriter) OpenArray() { w.sep(); w.B = append(w.B, '[') }

// CloseArray ends an array.
func (w *JSONWriter) CloseArray() { w.B = append(w.B, ']') }

// Key writes an object's key; its value follows.
func (w *JSONWriter) Key(k string) {
	w.sep()
	w.B = appendJSONString(w.B, k)
	w.B = append(w.B, ':')
}

// String writes a string value.
func (w *JSONWriter) String(s string) { w.sep(); w.B = appendJSONString(w.B, s) }

// Strings writes a list of strings (null for nil).
func (w *JSONWriter) Strings(v []string) {
	if v == nil {
		w.Raw([]byte("null"))
		return
	}
	w.OpenArray()
	for _, s := range v {
		w.String(s)
	}
	w.CloseArray()
}

// StringMap writes m with its keys sorted (null for nil).
func (w *JSONWriter) StringMap(m map[string]string) {
	if m == nil {
		w.Raw([]byte("null"))
		return
	}
	w.Open()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.Key(k)
		w.String(m[k])
	}
	w.Close()
}

// Int writes an integer.
func (w *JSONWriter) Int(v int64) { w.sep(); w.B = strconv.AppendInt(w.B, v, 10) }

// Uint writes an unsigned integer.
func (w *JSONWriter) Uint(v uint64) { w.sep(); w.B = strconv.AppendUint(w.B, v, 10) }

// Bool writes true or false.
func (w *JSONWriter) Bool(v bool) { w.sep(); w.B = strconv.AppendBool(w.B, v) }

// Float writes a finite v as encoding/json does (its floatEncoder).
func (w *JSONWriter) Float(v float64) {
	w.sep()
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.fail(&json.UnsupportedValueError{Str: strconv.FormatFloat(v, 'g', -1, 64)})
		w.B = append(w.B, '0')
		return
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 && (v != 0 || !math.Signbit(v)) {
		// A whole number: the digits strconv's shortest 'f' form has,
		// without its search for them (counts and zeros, most samples).
		w.B = strconv.AppendInt(w.B, int64(v), 10)
		return
	}
	format := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	w.B = strconv.AppendFloat(w.B, v, format, -1, 64)
	if n := len(w.B); format == 'e' && n >= 4 && w.B[n-4] == 'e' && w.B[n-3] == '-' && w.B[n-2] == '0' {
		w.B[n-2] = w.B[n-1] // e-07 -> e-7
		w.B = w.B[:n-1]
	}
}

// Time writes t as time.Time's MarshalJSON does.
func (w *JSONWriter) Time(t time.Time) {
	w.sep()
	if y := t.Year(); y < 0 || y > 9999 {
		_, err := t.MarshalJSON()
		w.fail(err)
		w.B = append(w.B, `""`...)
		return
	}
	w.B = append(w.B, '"')
	w.B = t.AppendFormat(w.B, time.RFC3339Nano)
	w.B = append(w.B, '"')
}

// Errors writes e as ErrorCounts.MarshalJSON does: the non-zero classes
// keyed by name, sorted.
func (w *JSONWriter) Errors(e *ErrorCounts) {
	type count struct {
		name string
		n    int64
	}
	var cs []count
	for c := range e {
		if c > 0 && e[c] != 0 {
			cs = append(cs, count{errorClassName(c), e[c]})
		}
	}
	slices.SortFunc(cs, func(a, b count) int { return strings.Compare(a.name, b.name) })
	w.Open()
	for _, c := range cs {
		w.Key(c.name)
		w.Int(c.n)
	}
	w.Close()
}

func errorClassName(c int) string { return pgerr.ErrorClass(c).String() }

// Value writes v with encoding/json, for the parts too rare to write by
// hand.
func (w *JSONWriter) Value(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.fail(err)
		b = []byte("null")
	}
	w.Raw(b)
}

// Raw writes b, a compact JSON value as encoding/json writes it.
func (w *JSONWriter) Raw(b []byte) { w.sep(); w.B = append(w.B, b...) }

func (w *JSONWriter) fail(err error) {
	if err != nil && w.Err == nil {
		w.Err = err
	}
}

// plainLow and plainHigh mark, bit c and bit c-64, the bytes
// appendJSONString copies as they are: printable ASCII but '"', '\\' and
// the HTML-sensitive '<', '>' and '&'. A bit test a byte (a run's samples
// are mostly series names), constants (no init work).
const (
	plainLow  uint64 = 0xFFFFFFFF00000000 &^ (1<<'"' | 1<<'&' | 1<<'<' | 1<<'>')
	plainHigh uint64 = 0xFFFFFFFFFFFFFFFF &^ (1 << ('\\' - 64))
)

// plainJSON reports whether appendJSONString copies c as it is.
func plainJSON(c byte) bool {
	if c < 64 {
		return plainLow>>c&1 != 0
	}
	return c < 128 && plainHigh>>(c-64)&1 != 0
}

// appendJSONString writes s quoted; what is not plain printable ASCII
// goes through encoding/json (escapes, HTML-safe characters, invalid
// UTF-8).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON(s[i]) {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// AppendIndent appends src, compact JSON as encoding/json writes it, indented
// as json.Indent(dst, src, "", "  ") does, without its validation.
func AppendIndent(dst, src []byte) []byte {
	const spaces = "                                                                "
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		for n := 2 * depth; n > 0; n -= len(spaces) {
			dst = append(dst, spaces[:min(n, len(spaces))]...)
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"': // copy the string whole, escapes and all
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1]) // empty: {} or []
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
