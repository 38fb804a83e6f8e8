package cli

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/workload"
)

// addScriptRunFlags adds the run flags of script workloads: -r, pgbench's
// per-statement latencies.
func addScriptRunFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.BoolVarP(&f.statementLatencies, "report-per-command", "r", false,
		"report each script command's mean latency in the summary (script workloads: tpcb, script)")
}

// scriptOutput sends a script workload's debug() output to stderr.
func scriptOutput(w workload.Workload, stderr io.Writer) {
	if d, ok := w.(interface{ SetDebugOutput(io.Writer) }); ok {
		d.SetDebugOutput(stderr)
	}
}
