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
		"report each script command's mean latency, failures and retries in the summary (script workloads: tpcb, script)")
}

// scriptOutput sends a script workload's debug() output to stderr and
// gives it pgbench's -j (default 1), which its choice of scripts follows.
func scriptOutput(w workload.Workload, stderr io.Writer, jobs int) {
	if s, ok := w.(workload.Scripter); ok {
		s.SetDebugOutput(stderr)
		s.SetThreads(max(jobs, 1))
	}
}
