package target

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Replica is a copy of a target that follows it: a streaming standby, a
// logical subscriber, or any replica named by a DSN (slony, londiste...).
// Its lag is measured with pgarena's heartbeat table (internal/target/replica).
type Replica struct {
	// Kind is streaming, logical, pglogical or dsn (named by --replica-dsn).
	Kind string
	// Config reaches the replica's copy of the target's database.
	Config *pgx.ConnConfig
	// Description names the replica, redacted.
	Description string
	// Attach, when set, makes the replica follow the named tables (the
	// workload's and pgarena's heartbeat), which exist on the target by
	// then, and returns when the replica holds their current data. A
	// streaming standby follows everything and needs none.
	Attach func(ctx context.Context, tables []string) error
	// Check, when set, is called before a run on an existing target is
	// recorded, with the tables Attach will get: an error is bad input
	// that changes nothing (a standby that has the tables already).
	// Attach checks again.
	Check func(ctx context.Context, tables []string) error
	// Trouble, when set, reports what keeps the replica from following in
	// its servers' own words (an error its server logged or its
	// subscription reports, an output plugin the primary refuses); nil
	// when nothing is known. Waits for the replica show it.
	Trouble func(ctx context.Context) error
}
