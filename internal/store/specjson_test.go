package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
)

// spec.json and server.json are what json.MarshalIndent wrote before they
// were written by hand, for every field: a field added to RunSpec or
// ServerInfo without its line in specjson.go fails here.
func TestSpecJSON(t *testing.T) {
	type plainSpec RunSpec
	type plainServer ServerInfo
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 300 {
		var spec RunSpec
		var server ServerInfo
		if i > 0 {
			fillRandom(reflect.ValueOf(&spec).Elem(), r, 0)
			fillRandom(reflect.ValueOf(&server).Elem(), r, 0)
			spec.Config = SortedJSON([]string{"", `{"a":[1,"x\u003c"],"b":{}}`, "[]"}[r.IntN(3)])
		}
		for _, c := range []struct {
			v     json.Marshaler
			plain any
		}{{spec, plainSpec(spec)}, {server, plainServer(server)}} {
			want, err := json.MarshalIndent(c.plain, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.v.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if got = metrics.AppendIndent(nil, got); !bytes.Equal(got, want) {
				t.Fatalf("case %d: by hand\n%s\nencoding/json\n%s", i, got, want)
			}
		}
	}
}

// fillRandom sets v to random values, each field zero now and then,
// strings with characters JSON escapes.
func fillRandom(v reflect.Value, r *rand.Rand, depth int) {
	strs := []string{"x", "tpcb", `a"b\c`, "<&>", "é\u2028", "\x01", "\xff", ""}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2026, 11, 27, r.IntN(24), 3, 5, r.IntN(3)*123456789, time.FixedZone("z", 3600*r.IntN(3)))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt([]int64{1, 12345, -3, 1 << 60}[r.IntN(4)])
	case reflect.Float64:
		v.SetFloat([]float64{0.5, 1e-9, 3e21, 12.25, -7, 1e20}[r.IntN(6)])
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // SortedJSON: set by the caller
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
		if depth < 3 {
			p := reflect.New(v.Type().Elem())
			fillRandom(p.Elem(), r, depth+1)
			v.Set(p)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() && r.IntN(4) != 0 {
				fillRandom(f, r, depth+1)
			}
		}
	default:
		panic(fmt.Sprintf("fillRandom: a value of kind %s", v.Kind()))
	}
}
