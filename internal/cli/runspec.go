package cli

import (
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/workload"
)

// runSpec is the session.Spec of the run (internal/runconfig built its
// groups, load and settings) with its provenance, hooks, segment and the
// Citus workers to sample.
func (a *app) runSpec(f *runFlags, w workload.Workload) (session.Spec, error) {
	spec := a.spec(f, w)
	a.groupsCreated(&spec, w)
	err := a.applySegment(&spec, f)
	if err == nil {
		err = a.applyWorkerDSNs(&spec, f.WorkerDSN)
	}
	return spec, err
}
