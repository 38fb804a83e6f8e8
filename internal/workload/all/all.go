// Package all links every workload into the binary and registers them:
// the CLI calls Register before it builds its commands. A new workload
// adds one line here.
package all

import (
	"sync"

	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/chbench"
	"github.com/pgarena/pgarena/internal/workload/script"
	"github.com/pgarena/pgarena/internal/workload/sysbench"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
	"github.com/pgarena/pgarena/internal/workload/tpcc"
	"github.com/pgarena/pgarena/internal/workload/tpch"
	"github.com/pgarena/pgarena/internal/workload/ycsb"
)

var once sync.Once

// Register adds every workload to workload's registry, once. Each Meta is
// static data, so registering runs none of the workloads' code (their
// packages have no init function).
func Register() {
	once.Do(func() {
		for _, m := range []workload.Meta{
			chbench.Meta,  // CH-benCHmark: TPC-C plus 22 analytic queries
			script.Meta,   // pgbench custom scripts on any database
			sysbench.Meta, // sysbench 1.0 OLTP tests, sysbench compatible
			tpcb.Meta,     // TPC-B, pgbench compatible
			tpcc.Meta,     // TPC-C, HammerDB TPROC-C compatible schema
			tpch.Meta,     // TPC-H-derived: power and throughput tests
			ycsb.Meta,     // YCSB core workloads A-F
		} {
			workload.Register(m)
		}
	})
}
