package cli

import (
	"io"

	"github.com/pgarena/pgarena/internal/workload"
)

// scriptOutput sends a script workload's debug() output to stderr and
// gives it pgbench's -j (default 1), which its choice of scripts follows.
func scriptOutput(w workload.Workload, stderr io.Writer, jobs int) {
	if s, ok := w.(workload.Scripter); ok {
		s.SetDebugOutput(stderr)
		s.SetThreads(max(jobs, 1))
	}
}
