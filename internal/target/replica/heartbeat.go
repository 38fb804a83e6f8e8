package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/target"
)

// HeartbeatTable is the table pgarena bumps on the primary to measure lag.
const HeartbeatTable = "pgarena_heartbeat"

// heartbeatMark is the table's comment: pgarena's mark (the loader's
// "pgarena:" prefix), so it is never confused with a user's table.
const heartbeatMark = "pgarena: replication heartbeat"

// ForeignHeartbeatError: a table named pgarena_heartbeat exists that
// pgarena did not create.
var ForeignHeartbeatError = errors.New("a table " + HeartbeatTable + " exists that pgarena did not create (no pgarena mark): pgarena will not write to it; rename or drop it")

// Heartbeat writes beats (an increasing sequence number) into the heartbeat
// table of the primary and remembers when each was committed, by pgarena's
// clock.
type Heartbeat struct {
	mu    sync.Mutex
	conn  *pgx.Conn
	first int64       // sequence number of at[0]
	at    []time.Time // commit time of each beat since first
}

// NewHeartbeat creates (or finds, marked) the heartbeat table on the
// primary and writes the first beat.
func NewHeartbeat(ctx context.Context, primary *pgx.ConnConfig) (*Heartbeat, error) {
	conn, err := target.Connect(ctx, primary, "pgarena-heartbeat")
	if err != nil {
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	h := &Heartbeat{conn: conn}
	if err := h.create(ctx); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	var seq int64
	if err := conn.QueryRow(ctx, `select seq from `+HeartbeatTable+` where id = 1`).Scan(&seq); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	h.first = seq + 1
	if _, err := h.Beat(ctx); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return h, nil
}

func (h *Heartbeat) create(ctx context.Context) error {
	var mark *string
	err := h.conn.QueryRow(ctx, `select obj_description(to_regclass($1), 'pg_class')`, HeartbeatTable).Scan(&mark)
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	var exists bool
	if err := h.conn.QueryRow(ctx, `select to_regclass($1) is not null`, HeartbeatTable).Scan(&exists); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	if exists && (mark == nil || *mark != heartbeatMark) {
		return ForeignHeartbeatError
	}
	if !exists {
		_, err = h.conn.Exec(ctx, `create table `+HeartbeatTable+` (id int primary key, seq bigint not null, at timestamptz not null);
			comment on table `+HeartbeatTable+` is '`+heartbeatMark+`'`)
		if err != nil {
			return fmt.Errorf("heartbeat: create %s: %w", HeartbeatTable, err)
		}
	}
	_, err = h.conn.Exec(ctx, `insert into `+HeartbeatTable+` values (1, 0, clock_timestamp()) on conflict (id) do nothing`)
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// Beat commits the next beat and returns its sequence number.
func (h *Heartbeat) Beat(ctx context.Context) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	seq := h.first + int64(len(h.at))
	if _, err := h.conn.Exec(ctx, `update `+HeartbeatTable+` set seq = $1, at = clock_timestamp() where id = 1`, seq); err != nil {
		return 0, fmt.Errorf("heartbeat: %w", err)
	}
	h.at = append(h.at, time.Now())
	return seq, nil
}

// Lag is how far behind a replica that shows beat seen is at now: the age
// of the oldest beat it lacks, 0 when it has the last.
func (h *Heartbeat) Lag(seen int64, now time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := seen + 1 - h.first
	if i < 0 {
		i = 0
	}
	if i >= int64(len(h.at)) {
		return 0
	}
	return max(now.Sub(h.at[i]), 0)
}

// Last is the sequence number of the last beat committed.
func (h *Heartbeat) Last() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.first + int64(len(h.at)) - 1
}

// Close closes the heartbeat's connection; the table stays (it is
// pgarena's, marked, and replicated).
func (h *Heartbeat) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.conn.Close(ctx)
}

// Seen reads the beat a replica shows (-1 while it has no heartbeat row,
// or not the table yet).
func Seen(ctx context.Context, conn *pgx.Conn) (int64, error) {
	var seq int64
	err := conn.QueryRow(ctx, `select seq from `+HeartbeatTable+` where id = 1`).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return -1, nil
	}
	if err != nil {
		if isUndefinedTable(err) {
			return -1, nil
		}
		return -1, err
	}
	return seq, nil
}

// Progress is what a replica says of its own replication: whether it is a
// standby, whether it has the heartbeat table, and how far it has come
// (the WAL a standby received, or replayed without a WAL receiver; what
// its built-in subscriptions received;
// "" when it says nothing). Two different Progress marks a while apart
// show a replica that replicates, if behind.
type Progress struct {
	Standby, HasTable bool
	Mark              string
}

// ReadProgress reads a replica's Progress.
func ReadProgress(ctx context.Context, cfg *pgx.ConnConfig) (Progress, error) {
	pctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	conn, err := target.Connect(pctx, cfg, "pgarena-replica-monitor")
	if err != nil {
		return Progress{}, err
	}
	defer conn.Close(context.Background())
	var p Progress
	var mark *string
	err = conn.QueryRow(pctx, `select pg_is_in_recovery(), to_regclass($1) is not null,
		case when pg_is_in_recovery() then coalesce(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::text
		else (select string_agg(coalesce(received_lsn::text, ''), ',' order by subid) from pg_stat_subscription) end`,
		HeartbeatTable).Scan(&p.Standby, &p.HasTable, &mark)
	if mark != nil {
		p.Mark = *mark
	}
	return p, err
}
