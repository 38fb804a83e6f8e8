package qgen

import "github.com/pgarena/pgarena/internal/workload/tpch/dbgen"

// The distributions of dists.dss that qgen's substitutions draw from, read
// from dbgen's copy of the file (the order and weights are part of the draw).
var (
	distRegions    = fileDist("regions")
	distNations2   = fileDist("nations2")
	distSegments   = fileDist("msegmnt")
	distShipModes  = fileDist("smode")
	distQ13a       = fileDist("Q13a")
	distQ13b       = fileDist("Q13b")
	distContainers = fileDist("p_cntr")
	distTypes      = fileDist("p_types")
	distColors     = fileDist("colors")
)

// nationRegion is the region (index into distRegions) of each nation of
// distNations2: the cumulative weights of dists.dss's "nations" (its
// weights are deltas of the region keys), which lists the nations in the
// same order (Clause 4.2.3; dbgen reads n_regionkey the same way).
var nationRegion = fileDist("nations").weights

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
