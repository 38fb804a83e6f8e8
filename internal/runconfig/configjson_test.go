package runconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// EncodeJSON writes what encoding/json writes, for every field: a field
// added to Config without its line in appendJSON fails here.
func TestEncodeJSON(t *testing.T) {
	def := Default()
	cases := map[string]*Config{"zero": {}, "default": &def}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		var c Config
		fill(reflect.ValueOf(&c).Elem(), r, i == 0)
		cases[fmt.Sprint("random ", i)] = &c
	}
	for name, c := range cases {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.EncodeJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: EncodeJSON\n%s\nencoding/json\n%s", name, got, want)
		}
	}
}

// fill sets each field of v to a random value, or zero now and then
// (never when all is set), strings with characters JSON escapes.
func fill(v reflect.Value, r *rand.Rand, all bool) {
	strs := []string{"", "x", "tpcb", `a"b\c`, "<&>", "é\u2028", "\x01", "\xff"}
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() || (!all && r.IntN(4) == 0) {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(strs[1+r.IntN(len(strs)-1)])
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(r.Int64N(1<<40) - 1<<39)
		case reflect.Uint64:
			f.SetUint(r.Uint64())
		case reflect.Float64:
			f.SetFloat([]float64{0.5, 1e-9, 3e21, 12.25, -7, 1e20}[r.IntN(6)])
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), r.IntN(3), 3)
			for j := range s.Len() {
				s.Index(j).SetString(strs[r.IntN(len(strs))])
			}
			f.Set(s)
		case reflect.Map:
			m := reflect.MakeMap(f.Type())
			for range r.IntN(4) {
				m.SetMapIndex(reflect.ValueOf(strs[r.IntN(len(strs))]), reflect.ValueOf(strs[r.IntN(len(strs))]))
			}
			f.Set(m)
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			switch p.Elem().Kind() {
			case reflect.Float64:
				p.Elem().SetFloat(0.25)
			default:
				p.Elem().SetInt(r.Int64N(1000))
			}
			f.Set(p)
		default:
			panic("fill: a field of kind " + f.Kind().String() + ": teach fill and appendJSON")
		}
	}
}
