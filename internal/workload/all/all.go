// Package all links every workload into the binary: importing it registers
// them all. A new workload adds one line here.
package all

import (
	_ "github.com/pgarena/pgarena/internal/workload/chbench"  // CH-benCHmark: TPC-C plus 22 analytic queries
	_ "github.com/pgarena/pgarena/internal/workload/script"   // pgbench custom scripts on any database
	_ "github.com/pgarena/pgarena/internal/workload/sysbench" // sysbench 1.0 OLTP tests, sysbench compatible
	_ "github.com/pgarena/pgarena/internal/workload/tpcb"     // TPC-B, pgbench compatible
	_ "github.com/pgarena/pgarena/internal/workload/tpcc"     // TPC-C, HammerDB TPROC-C compatible schema
	_ "github.com/pgarena/pgarena/internal/workload/tpch"     // TPC-H-derived: power and throughput tests
	_ "github.com/pgarena/pgarena/internal/workload/ycsb"     // YCSB core workloads A-F
)
