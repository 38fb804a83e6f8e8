package ycsb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/pgarena/pgarena/internal/lazy"
)

// op is one of CoreWorkload's operations.
type op int

const (
	opRead op = iota
	opUpdate
	opInsert
	opScan
	opReadModifyWrite
	numOps
)

// opNames are the transaction type names, in op order.
var opNames = [numOps]string{"read", "update", "insert", "scan", "read_modify_write"}

// opFlags name each op's proportion flag, in op order.
var opFlags = [numOps]string{"read-proportion", "update-proportion", "insert-proportion", "scan-proportion", "rmw-proportion"}

// Request distributions (YCSB's requestdistribution).
const (
	distUniform = "uniform"
	distZipfian = "zipfian"
	distLatest  = "latest"
	distHotspot = "hotspot"
	// exponential: YCSB's ExponentialGenerator, counting back from the
	// newest key (exponential.percentile of the operations on the newest
	// exponential.frac of the rows)
	distExponential = "exponential"
	// sequential: YCSB's SequentialGenerator, key numbers 0, 1, 2, ... of
	// the rows the run began with, wrapping, one counter shared by the
	// workload's clients
	distSequential = "sequential"
)

var requestDists = []string{distUniform, distZipfian, distLatest, distHotspot, distExponential, distSequential}

// mix is a resolved operation mix and its key and scan-length choices.
type mix struct {
	props    [numOps]float64
	dist     string
	maxScan  int
	minScan  int
	scanDist string // uniform or zipfian
	hotData  float64
	hotOpn   float64
	// exponential: the percentile and fraction (YCSB's
	// exponential.percentile and exponential.frac)
	expPercentile, expFrac float64
	readAll                bool
	writeAll               bool
	workloadName           string // the letter
}

// coreWorkloads are the property files workloads/workloada..f shipped with
// YCSB: the proportions and request distribution of each letter. Every
// letter reads all fields; only E scans, with maxscanlength 100 and a
// uniform scan length (CoreWorkload's default maxscanlength is 1000).
var coreWorkloads = lazy.Value[map[string]mix]{New: buildCoreWorkloads}

func buildCoreWorkloads() map[string]mix {
	return map[string]mix{
		"a": {props: [numOps]float64{opRead: 0.5, opUpdate: 0.5}, dist: distZipfian},          // update heavy
		"b": {props: [numOps]float64{opRead: 0.95, opUpdate: 0.05}, dist: distZipfian},        // read mostly
		"c": {props: [numOps]float64{opRead: 1}, dist: distZipfian},                           // read only
		"d": {props: [numOps]float64{opRead: 0.95, opInsert: 0.05}, dist: distLatest},         // read latest
		"e": {props: [numOps]float64{opScan: 0.95, opInsert: 0.05}, dist: distZipfian},        // short ranges
		"f": {props: [numOps]float64{opRead: 0.5, opReadModifyWrite: 0.5}, dist: distZipfian}, // read-modify-write
	}
}

// defaultMaxScan is CoreWorkload's maxscanlength default; workload E's is
// 100.
const defaultMaxScan = 1000

func letterMix(letter string) (mix, error) {
	m, ok := coreWorkloads.Get()[strings.ToLower(letter)]
	if !ok {
		return mix{}, fmt.Errorf("--workload %q: want one of a, b, c, d, e, f (YCSB's core workloads)", letter)
	}
	m.workloadName = strings.ToLower(letter)
	m.maxScan = defaultMaxScan
	if m.workloadName == "e" {
		m.maxScan = 100
	}
	m.scanDist = distUniform
	m.hotData, m.hotOpn = 0.2, 0.8
	m.minScan = 1
	m.expPercentile, m.expFrac = defaultExpPercentile, defaultExpFrac
	m.readAll = true
	return m, nil
}

// validate checks the mix after the overrides.
func (m *mix) validate() error {
	var sum float64
	for i, p := range m.props {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("--%s must be between 0 and 1 (got %g)", opFlags[i], p)
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-6 {
		return fmt.Errorf("the operation proportions of workload %s add up to %g, want 1 (read %g, update %g, insert %g, scan %g, rmw %g)",
			m.workloadName, sum, m.props[opRead], m.props[opUpdate], m.props[opInsert], m.props[opScan], m.props[opReadModifyWrite])
	}
	found := false
	for _, d := range requestDists {
		found = found || d == m.dist
	}
	if !found {
		return fmt.Errorf("--request-distribution %q: want one of %s", m.dist, strings.Join(requestDists, ", "))
	}
	if m.scanDist != distUniform && m.scanDist != distZipfian {
		return fmt.Errorf("--scan-length-distribution %q: want uniform or zipfian", m.scanDist)
	}
	if m.maxScan < 1 {
		return fmt.Errorf("--max-scan-length must be at least 1 (got %d)", m.maxScan)
	}
	if m.minScan < 1 || m.minScan > m.maxScan {
		return fmt.Errorf("--min-scan-length must be between 1 and --max-scan-length %d (got %d)", m.maxScan, m.minScan)
	}
	if !(m.expPercentile > 0 && m.expPercentile < 100) {
		return fmt.Errorf("--exponential-percentile must be above 0 and below 100 (got %g)", m.expPercentile)
	}
	if !(m.expFrac > 0) || math.IsInf(m.expFrac, 0) {
		return fmt.Errorf("--exponential-frac must be above 0 (got %g)", m.expFrac)
	}
	if !(m.hotData >= 0 && m.hotData <= 1) || !(m.hotOpn >= 0 && m.hotOpn <= 1) {
		return fmt.Errorf("--hotspot-data-fraction and --hotspot-opn-fraction must be between 0 and 1 (got %g and %g)", m.hotData, m.hotOpn)
	}
	return nil
}

// active lists the ops with a proportion above 0, in op order: the
// workload's transaction types.
func (m *mix) active() []op {
	var ops []op
	for o := range numOps {
		if m.props[o] > 0 {
			ops = append(ops, o)
		}
	}
	return ops
}

// chooser draws ops in the mix's proportions (YCSB's DiscreteGenerator
// over the operations): cum[i] is the cumulative proportion of the i-th
// active op.
type chooser struct {
	cum []float64
}

func newChooser(m *mix) chooser {
	var c chooser
	var sum float64
	for _, o := range m.active() {
		sum += m.props[o]
		c.cum = append(c.cum, sum)
	}
	return c
}

// next returns the index of an active op.
func (c chooser) next(rng *rand.Rand) int {
	u := rng.Float64() * c.cum[len(c.cum)-1]
	for i, v := range c.cum {
		if u < v {
			return i
		}
	}
	return len(c.cum) - 1
}
