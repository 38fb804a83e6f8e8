package qgen

import (
	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/workload/tpch/dbgen"
)

// fileDists are the distributions of dists.dss that qgen's substitutions
// draw from, read from dbgen's copy of the file (the order and weights are
// part of the draw) on first use.
var fileDists = lazy.Value[*qgenDists]{New: buildFileDists}

func buildFileDists() *qgenDists {
	return &qgenDists{
		regions:    fileDist("regions"),
		nations2:   fileDist("nations2"),
		segments:   fileDist("msegmnt"),
		shipModes:  fileDist("smode"),
		q13a:       fileDist("Q13a"),
		q13b:       fileDist("Q13b"),
		containers: fileDist("p_cntr"),
		types:      fileDist("p_types"),
		colors:     fileDist("colors"),
		// nationRegion is the region (index into regions) of each nation of
		// nations2: the cumulative weights of dists.dss's "nations" (its
		// weights are deltas of the region keys), which lists the nations in the
		// same order (Clause 4.2.3; dbgen reads n_regionkey the same way).
		nationRegion: fileDist("nations").weights,
	}
}

type qgenDists struct {
	regions, nations2, segments, shipModes, q13a, q13b, containers, types, colors dist
	nationRegion                                                                  []int64
}

// fileDist is dists.dss's distribution name with cumulative weights.
func fileDist(name string) dist {
	values, weights, ok := dbgen.Distribution(name)
	if !ok {
		panic("qgen: dists.dss has no distribution " + name)
	}
	d := dist{names: values, weights: make([]int64, len(weights))}
	var total int64
	for i, w := range weights {
		total += w
		d.weights[i] = total
	}
	return d
}
