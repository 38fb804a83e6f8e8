package workload

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtext"
)

// Citus tells whether init should distribute a workload's tables with
// Citus: whenever the target has the citus extension. asked (--citus) on a
// target without it, and a Citus worker node, are errors naming what to
// do; name prefixes other errors.
func Citus(ctx context.Context, conn *pgx.Conn, name string, asked bool) (bool, error) {
	var has bool
	if err := conn.QueryRow(ctx, "select exists (select 1 from pg_extension where extname = 'citus')").Scan(&has); err != nil {
		return false, fmt.Errorf("%s: look for the citus extension: %w", name, err)
	}
	if asked && !has {
		return false, errors.New("--citus: the target has no citus extension (run `create extension citus` on the coordinator, or leave out --citus)")
	}
	if has {
		// A worker knows its coordinator's nodes (metadata synced) but is
		// not one; tables created there would not be distributed.
		var coordinator bool
		var nodes int
		if err := conn.QueryRow(ctx, "select citus_is_coordinator(), (select count(*) from pg_dist_node)").Scan(&coordinator, &nodes); err != nil {
			return false, fmt.Errorf("%s: ask citus whether this is the coordinator: %w", name, err)
		}
		if !coordinator && nodes > 0 {
			return false, errors.New("the target is a Citus worker node, not the coordinator: point --dsn at the coordinator")
		}
	}
	return has, nil
}

// CitusDistributed tells whether table is a Citus distributed table on
// the target (false without the citus extension): a run then adapts its
// queries or session to Citus.
func CitusDistributed(ctx context.Context, conn pgtext.Querier, table string) (bool, error) {
	var has bool
	if err := conn.QueryRow(ctx, "select exists (select 1 from pg_extension where extname = 'citus')").Scan(&has); err != nil || !has {
		return false, err
	}
	var dist bool
	err := conn.QueryRow(ctx, "select exists (select 1 from pg_dist_partition where logicalrelid = to_regclass($1) and partmethod = 'h')", table).Scan(&dist)
	if err != nil {
		return false, fmt.Errorf("look for %s in pg_dist_partition: %w", table, err)
	}
	return dist, nil
}
