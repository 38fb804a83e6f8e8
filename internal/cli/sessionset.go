package cli

import (
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/target"
)

// applyWorkerDSNs parses --worker-dsn into the spec.
func (a *app) applyWorkerDSNs(spec *session.Spec, dsns []string) error {
	for _, d := range dsns {
		cfg, err := target.ParseDSN(d, a.getenv)
		if err != nil {
			return usagef("--worker-dsn: %s", err)
		}
		spec.CitusWorkers = append(spec.CitusWorkers, cfg)
	}
	return nil
}
