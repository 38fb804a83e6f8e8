package workload

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Citus tells whether init should distribute a workload's tables with
// Citus: whenever the target has the citus extension. asked (--citus) on a
// target without it is an error naming what to do; name prefixes other
// errors.
func Citus(ctx context.Context, conn *pgx.Conn, name string, asked bool) (bool, error) {
	var has bool
	if err := conn.QueryRow(ctx, "select exists (select 1 from pg_extension where extname = 'citus')").Scan(&has); err != nil {
		return false, fmt.Errorf("%s: look for the citus extension: %w", name, err)
	}
	if asked && !has {
		return false, errors.New("--citus: the target has no citus extension (run `create extension citus` on the coordinator, or leave out --citus)")
	}
	return has, nil
}

// CitusDistributed tells whether table is a Citus distributed table on
// the target (false without the citus extension): a run then adapts its
// queries or session to Citus.
func CitusDistributed(ctx context.Context, conn *pgx.Conn, table string) (bool, error) {
	has, err := Citus(ctx, conn, "", false)
	if err != nil || !has {
		return false, err
	}
	var dist bool
	err = conn.QueryRow(ctx, "select exists (select 1 from pg_dist_partition where logicalrelid = to_regclass($1) and partmethod = 'h')", table).Scan(&dist)
	if err != nil {
		return false, fmt.Errorf("look for %s in pg_dist_partition: %w", table, err)
	}
	return dist, nil
}
