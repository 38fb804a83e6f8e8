package pooler

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/target"
)

// External is a target that already goes through a pooler the user runs
// (pgbouncer, odyssey): its admin console (Admin, a connection to the
// pooler's admin database) is sampled with SHOW POOLS and SHOW STATS.
// Its pool mode is not known, so prepared statements are not refused
// before the run; their failures are findings.
type External struct {
	Inner target.Provider
	Admin *pgx.ConnConfig
}

// Describe is the inner provider's.
func (e *External) Describe() string { return e.Inner.Describe() + " (through a pooler)" }

// CreatesTarget is the inner provider's.
func (e *External) CreatesTarget() bool { return target.CreatesTarget(e.Inner) }

// Provision provisions the inner target and checks the admin console
// answers SHOW POOLS.
func (e *External) Provision(ctx context.Context) (*target.Target, func(), error) {
	t, down, err := e.Inner.Provision(ctx)
	if err != nil {
		return nil, nil, err
	}
	admin := adminConfig(e.Admin, "")
	cctx, cancel := context.WithTimeout(ctx, admin.ConnectTimeout+5e9)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, admin)
	if err == nil {
		_, err = conn.Exec(cctx, "SHOW POOLS")
		conn.Close(context.Background())
	}
	if err != nil {
		down()
		return nil, nil, fmt.Errorf("--pooler-admin-dsn %s: the pooler's admin console does not answer SHOW POOLS: %v",
			target.Redacted(admin), err)
	}
	out := *t
	out.Admin = admin
	out.Pooler = &target.Pooler{Kind: "console", Note: "an external pooler, sampled through its admin console"}
	out.Description = t.Description + " (through a pooler)"
	return &out, down, nil
}
