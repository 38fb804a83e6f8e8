package cli

import (
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/workload"
)

// runSpec is the session.Spec of run's flags: the workload's client
// groups, reads sent to a replica, the segment, session settings and the
// Citus workers to sample.
func (a *app) runSpec(f *runFlags, w workload.Workload, threads int) (session.Spec, error) {
	spec := a.spec(f, w, threads)
	a.splitGroups(&spec, w)
	err := splitReads(&spec, f.ReadDSN)
	if err == nil {
		err = a.applySegment(&spec, f)
	}
	if err == nil {
		err = applySessionSets(&spec, f.SessionSet)
	}
	if err == nil {
		err = a.applyWorkerDSNs(&spec, f.WorkerDSN)
	}
	return spec, err
}
