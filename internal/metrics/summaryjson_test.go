package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Summary.MarshalJSON writes what encoding/json wrote before it was written
// by hand, for every field: a field added to Summary (or to a type in it)
// without its line in summaryjson.go fails here.
func TestSummaryJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := map[string]Summary{"zero": {}}
	for i := range 400 {
		var s Summary
		fillRandom(reflect.ValueOf(&s).Elem(), r, 0)
		if i%3 == 0 { // figures of the types present, and name clashes
			for j := range s.Tx {
				s.Figures = append(s.Figures, Figure{Name: []string{"rollbacks", "tps", "failed", "name"}[r.IntN(4)], Tx: s.Tx[j].Name, Value: float64(j)})
			}
			s.Figures = append(s.Figures, Figure{Name: []string{"nopm", "tps", "by_type"}[r.IntN(3)], Value: 7})
		}
		cases[fmt.Sprint("random ", i)] = s
	}
	for name, s := range cases {
		want, err := summaryJSONReflect(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: MarshalJSON\n%s\nencoding/json\n%s", name, got, want)
		}
		var ind bytes.Buffer
		if err := json.Indent(&ind, want, "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := AppendIndent(nil, want); !bytes.Equal(got, ind.Bytes()) {
			t.Fatalf("%s: AppendIndent\n%s\njson.Indent\n%s", name, got, ind.Bytes())
		}
	}
}

// Interval's hand-written form is encoding/json's, for every field.
func TestIntervalJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 400 {
		var j intervalJSON
		if i > 0 {
			fillRandom(reflect.ValueOf(&j).Elem(), r, 0)
		}
		want, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		w := JSONWriter{}
		j.writeJSON(&w)
		if w.Err != nil {
			t.Fatal(w.Err)
		}
		if !bytes.Equal(w.B, want) {
			t.Fatalf("case %d: writeJSON\n%s\nencoding/json\n%s", i, w.B, want)
		}
	}
}

// fillRandom sets v to random values, each field or element zero now and
// then, strings with characters JSON escapes.
func fillRandom(v reflect.Value, r *rand.Rand, depth int) {
	strs := []string{"x", "tpcb", "new_order", `a"b\\c`, "<&>", "\u00e9\u2028", "\x01", "\xff", "latency_ms", "errors"}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2026, 11, 27, r.IntN(24), r.IntN(60), 5, r.IntN(3)*123456789, time.FixedZone("z", 3600*r.IntN(3)))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt([]int64{1, 12345, -3, 1 << 60, 100}[r.IntN(5)] % (1 << (v.Type().Bits() - 1)))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(r.IntN(40)))
	case reflect.Float64:
		v.SetFloat([]float64{0.5, 1e-9, 3e21, 12.25, -7, 1e20, 1234.567}[r.IntN(7)])
	case reflect.Array:
		for i := range v.Len() {
			if r.IntN(3) == 0 {
				fillRandom(v.Index(i), r, depth+1)
			}
		}
	case reflect.Slice:
		if depth > 3 {
			return
		}
		s := reflect.MakeSlice(v.Type(), r.IntN(3), 3)
		for j := range s.Len() {
			fillRandom(s.Index(j), r, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range r.IntN(4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillRandom(k, r, depth+1)
			fillRandom(e, r, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		if depth > 3 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(p.Elem(), r, depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() && (depth > 0 || r.IntN(4) != 0) && r.IntN(3) != 0 {
				fillRandom(f, r, depth+1)
			}
		}
	default:
		panic("fillRandom: a value of kind " + v.Kind().String())
	}
}

// summaryJSONReflect is what Summary.MarshalJSON wrote through
// encoding/json before it was written by hand: the reference.
func summaryJSONReflect(s Summary) ([]byte, error) {
	type plain Summary
	b, err := json.Marshal(plain(s))
	if err != nil || (len(s.Figures) == 0 && len(s.Tx) == 0) {
		return b, err
	}
	var taken map[string]json.RawMessage
	if err := json.Unmarshal(b, &taken); err != nil {
		return nil, err
	}
	// The extra keys go after the struct's, which keep their order.
	var extra []string
	add := func(key string, v any) error {
		if _, dup := taken[key]; dup {
			return nil
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return err
		}
		kb, _ := json.Marshal(key)
		taken[key] = vb
		extra = append(extra, string(kb)+":"+string(vb))
		return nil
	}
	byType := map[string]map[string]any{}
	var order []string
	for _, t := range s.Tx {
		tb, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		var tm map[string]any
		if err := json.Unmarshal(tb, &tm); err != nil {
			return nil, err
		}
		delete(tm, "name")
		byType[t.Name] = tm
		order = append(order, t.Name)
	}
	for _, f := range s.Figures {
		if f.Tx == "" {
			if err := add(f.Name, f.Value); err != nil {
				return nil, err
			}
			continue
		}
		tm := byType[f.Tx]
		if tm == nil {
			tm = map[string]any{}
			byType[f.Tx] = tm
		}
		if _, dup := tm[f.Name]; !dup {
			tm[f.Name] = f.Value
		}
	}
	if len(byType) > 0 {
		if err := add("by_type", byType); err != nil {
			return nil, err
		}
	}
	if len(extra) == 0 {
		return b, nil
	}
	out := append(b[:len(b)-1:len(b)-1], ',')
	out = append(out, strings.Join(extra, ",")...)
	return append(out, '}'), nil
}

// TestJSONStringEveryByte: appendJSONString writes every byte, alone and
// inside text, as encoding/json does.
func TestJSONStringEveryByte(t *testing.T) {
	for c := range 256 {
		for _, s := range []string{string(rune(c)), string([]byte{byte(c)}), "a" + string([]byte{byte(c)}) + "b"} {
			want, _ := json.Marshal(s)
			if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
				t.Errorf("%q: %s, encoding/json %s", s, got, want)
			}
		}
	}
}

// TestJSONFloat: Float writes numbers as encoding/json does, whole ones
// (written as integers) and the edges around them included.
func TestJSONFloat(t *testing.T) {
	vs := []float64{0, math.Copysign(0, -1), 1, -1, 7, 1e6, -1e6, 123456789, 1e15 - 1, 1e15, 1e15 + 2, 1e20, 1e21,
		-1e21, 0.5, -0.5, 1e-7, 12.25, 2.5e-6, math.MaxInt64, math.MinInt64, math.Nextafter(1, 2), 4503599627370496}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		vs = append(vs, math.Round(r.NormFloat64()*1e6), math.Round(r.ExpFloat64()*1e12), r.NormFloat64()*1e3)
	}
	for _, v := range vs {
		want, _ := json.Marshal(v)
		w := JSONWriter{}
		w.Float(v)
		if !bytes.Equal(w.B, want) {
			t.Errorf("%v: %s, encoding/json %s", v, w.B, want)
		}
	}
}
