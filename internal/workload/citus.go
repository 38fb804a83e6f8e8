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
