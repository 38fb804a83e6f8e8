// Package all links every workload into the binary: importing it registers
// them all. A new workload adds one line here.
package all

import (
	_ "github.com/pgarena/pgarena/internal/workload/script" // pgbench custom scripts on any database
	_ "github.com/pgarena/pgarena/internal/workload/tpcb"   // TPC-B, pgbench compatible
	_ "github.com/pgarena/pgarena/internal/workload/tpcc"   // TPC-C, HammerDB TPROC-C compatible schema
)
