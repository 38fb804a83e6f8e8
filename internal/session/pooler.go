package session

import (
	"fmt"

	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/sampler"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
)

// poolerInfo is the record of a target's pooler (nil without one).
func poolerInfo(p *target.Pooler) *store.PoolerInfo {
	if p == nil {
		return nil
	}
	return &store.PoolerInfo{Kind: p.Kind, Mode: p.Mode, PoolSize: p.PoolSize, Version: p.Version, Note: p.Note,
		Settings: p.Settings}
}

// samplerPooler is where the sampler reads a target's pooler statistics
// (nil without a pooler, or one without statistics).
func samplerPooler(t *target.Target) *sampler.Pooler {
	if t.Pooler == nil || (t.Admin == nil && t.Pooler.StatsSocket == "") {
		return nil
	}
	return &sampler.Pooler{Kind: t.Pooler.Kind, Admin: t.Admin, StatsSocket: t.Pooler.StatsSocket}
}

// preparedFinding explains failures of prepared statements: a pooler
// that does not keep a session's prepared statements (a pgbouncer in
// transaction mode pgarena did not start, so could not refuse before).
func preparedFinding(n int64, p *target.Pooler) store.Finding {
	through := "through a pooler"
	if p != nil && p.Kind != "console" {
		through = "through " + p.Kind
	}
	return store.Finding{Severity: store.SeverityCritical, Kind: "prepared_statements",
		Message: fmt.Sprintf("%d transactions failed on missing prepared statements (SQLSTATE 26000/42P05) %s: %s",
			n, through, pgerr.ClassPreparedStatements.Advice())}
}
