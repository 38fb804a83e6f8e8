package dbgen

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/pgarena/pgarena/internal/lazy"
)

// dists.dss is the TPC-H distribution file shipped with dbgen (the spec's word lists and
// weights, Clause 4.2.2.13 and 4.2.3), transcribed unchanged.
//
//go:embed dists.dss
var distsFile string

// dist is one named distribution of dists.dss: its values in file order and their weights.
// Cumulative weights give nations their region keys (dbgen reads n_regionkey that way).
type dist struct {
	values     []string
	cumulative []int32
	// pick maps a uniform draw in [0, total) to the value's index (weights > 0 only).
	pick []uint16
}

// dists are the distributions of dists.dss, parsed on first use (not at package
// initialisation: every pgarena command links this package, few generate data); read-only.
var dists = lazy.Value[map[string]*dist]{New: func() map[string]*dist { return parseDists(distsFile) }}

func parseDists(text string) map[string]*dist {
	out := map[string]*dist{}
	var cur *dist
	var name string
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if cur == nil {
			if len(fields) == 2 && strings.EqualFold(fields[0], "begin") {
				cur, name = &dist{}, fields[1]
			}
			continue
		}
		if strings.EqualFold(fields[0], "end") {
			out[name] = cur
			cur = nil
			continue
		}
		value, weight, ok := strings.Cut(line, "|")
		if !ok {
			panic(fmt.Sprintf("dists.dss: bad line %q", line))
		}
		w, err := strconv.Atoi(strings.TrimSpace(weight))
		if err != nil {
			panic(fmt.Sprintf("dists.dss: bad weight in %q", line))
		}
		if strings.EqualFold(value, "count") {
			continue
		}
		var total int32
		if n := len(cur.cumulative); n > 0 {
			total = cur.cumulative[n-1]
		}
		cur.values = append(cur.values, value)
		cur.cumulative = append(cur.cumulative, total+int32(w))
		for i := 0; i < w; i++ {
			cur.pick = append(cur.pick, uint16(len(cur.values)-1))
		}
	}
	return out
}

// Distribution returns the values of dists.dss's distribution name in file
// order and their weights, for qgen's substitution parameters (Clause 2.4),
// which draw from the same file; false if the file has no such distribution.
func Distribution(name string) (values []string, weights []int64, ok bool) {
	d, ok := dists.Get()[name]
	if !ok {
		return nil, nil, false
	}
	weights = make([]int64, len(d.cumulative))
	var prev int32
	for i, c := range d.cumulative {
		weights[i], prev = int64(c-prev), c
	}
	return append([]string(nil), d.values...), weights, true
}

func mustDist(name string) *dist {
	d, ok := dists.Get()[name]
	if !ok {
		panic("dists.dss: no distribution " + name)
	}
	return d
}

// namedDists are the distributions the tables draw from, by use (Clause 4.2.2.13).
type namedDists struct {
	colors, types, containers, segments, nations, regions *dist
	priorities, flags, instruct, modes                    *dist
}

// distsByUse is namedDists, looked up on first use; read-only.
var distsByUse = lazy.Value[*namedDists]{New: buildDistsByUse}

func buildDistsByUse() *namedDists {
	return &namedDists{
		colors:     mustDist("colors"),
		types:      mustDist("p_types"),
		containers: mustDist("p_cntr"),
		segments:   mustDist("msegmnt"),
		nations:    mustDist("nations"),
		regions:    mustDist("regions"),
		priorities: mustDist("o_oprio"),
		flags:      mustDist("rflag"),
		instruct:   mustDist("instruct"),
		modes:      mustDist("smode"),
	}
}

// random picks a value with dbgen's pick_str: a draw in [0, total weight) selects the first
// value whose cumulative weight exceeds it.
func (d *dist) random(s *stream) string {
	return d.values[d.pick[s.intn(0, int32(len(d.pick))-1)]]
}
