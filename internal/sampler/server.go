package sampler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/sampled"
	"github.com/pgarena/pgarena/internal/store"
)

// server samples one PostgreSQL server on its own connection. Only the
// sampler's goroutine uses it (and Stop, once that goroutine is done).
type server struct {
	opts Options
	cfg  *pgx.ConnConfig
	conn *pgx.Conn

	version  int
	standby  bool
	maxConns int // max_connections - superuser_reserved_connections
	sources  []*serverSource

	lost    bool   // the connection is lost and the loss was noted
	lastErr string // last transient error noted, to note each once

	batchOf  []*serverSource // the sources batchSQL queries
	batchSQL string          // their queries, joined by "\n;"

	db, ckpt *counters // run totals of pg_stat_database and checkpoint counters
}

// serverSource is one query on the server, made into a sample.
type serverSource struct {
	name string
	off  bool // skipped; its note has been emitted
	// query is the source's statement, sent with the other sources' in
	// one round trip.
	query string
	// read makes the query's result (text, textrows.go) into the
	// source's sample, closing rr; ok is false when there is nothing to
	// report yet (the first call of a source of deltas).
	read func(rr *pgconn.ResultReader, now time.Time) (smp store.Sample, ok bool, err error)
	// more, if set, completes a sample read with further queries, once
	// the connection is free (the statements' texts).
	more func(ctx context.Context, conn *pgx.Conn, smp *store.Sample) error
	// note, if set, is emitted once at the next sample (a skip decided at
	// start, a hint about permissions).
	note string
}

// newServer connects and decides which sources the server supports.
func newServer(ctx context.Context, opts Options) (*server, error) {
	cfg := opts.ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = AppName
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol // works through poolers too
	s := &server{opts: opts, cfg: cfg}
	timeout := cfg.ConnectTimeout
	if timeout <= 0 || timeout > 30*time.Second {
		timeout = 30 * time.Second
	}
	if err := s.connect(ctx, timeout); err != nil {
		return nil, fmt.Errorf("sampler: cannot connect: %s: %w", pgerr.Describe(err), err)
	}
	qctx, cancel := context.WithTimeout(ctx, max(opts.QueryTimeout, 5*time.Second))
	defer cancel()
	var reserved int
	err := s.conn.QueryRow(qctx, `select current_setting('server_version_num')::int, pg_is_in_recovery(),
		current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int`).
		Scan(&s.version, &s.standby, &s.maxConns, &reserved)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("sampler: read server version: %w", err)
	}
	s.maxConns -= reserved
	var haveStatements bool
	err = s.conn.QueryRow(qctx, `select exists (select 1 from pg_extension where extname = 'pg_stat_statements')`).Scan(&haveStatements)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("sampler: look for pg_stat_statements: %w", err)
	}
	s.sources = []*serverSource{
		s.sampleDatabase(),
		s.sampleActivity(),
		s.sampleWAL(),
		s.sampleCheckpoints(),
		{name: "locks", query: locksQuery, read: readLocks},
		{name: "replication", query: replicationQuery, read: readReplication},
		s.sampleStatements(),
	}
	for _, src := range s.sources {
		switch {
		case s.standby && (src.name == "wal" || src.name == "replication"):
			src.off, src.note = true, src.name+": the server is a standby, skipped"
		case src.name == "pg_stat_statements" && !haveStatements:
			src.off, src.note = true, "pg_stat_statements: not installed in this database, skipped"
		case src.name == "pg_stat_statements" && s.version < 130000:
			src.off, src.note = true, "pg_stat_statements: needs PostgreSQL 13 or later, skipped"
		case s.version < 100000:
			src.off, src.note = true, src.name+": needs PostgreSQL 10 or later, skipped"
		}
	}
	return s, nil
}

func (s *server) connect(ctx context.Context, timeout time.Duration) error {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, s.cfg)
	if err != nil {
		return err
	}
	// Belt and braces with the per-query deadline: the server gives up too.
	// A pooler may refuse SET; the deadline still holds.
	ms := strconv.FormatInt(s.opts.QueryTimeout.Milliseconds(), 10)
	_, _ = conn.Exec(cctx, "set statement_timeout = "+ms+"; set lock_timeout = "+ms)
	s.conn = conn
	return nil
}

func (s *server) close() {
	if s.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.conn.Close(ctx)
	s.conn = nil
}

// sample runs every source that is on: their queries in one round trip
// (a batch, one simple-protocol message, under the deadline of all of
// them). From the first source whose query or reading fails, the rest run
// one by one, each under its own deadline, so that a failure is the
// source's alone.
func (s *server) sample(ctx context.Context, now time.Time) []store.Sample {
	var out []store.Sample
	for _, src := range s.sources {
		if src.note != "" {
			out = append(out, noteSample(now, src.name, src.note, store.SeverityInfo))
			src.note = ""
		}
	}
	if s.conn == nil || s.conn.IsClosed() {
		s.conn = nil
		if err := s.connect(ctx, s.opts.QueryTimeout); err != nil {
			if ctx.Err() == nil && !s.lost {
				s.lost = true
				out = append(out, noteSample(now, "server", "server: connection lost, reconnecting: "+pgerr.Describe(err), store.SeverityWarning))
			}
			return out
		}
		if s.lost {
			s.lost = false
			out = append(out, noteSample(now, "server", "server: reconnected", store.SeverityInfo))
		}
	}
	var on []*serverSource
	for _, src := range s.sources {
		if !src.off {
			on = append(on, src)
		}
	}
	var read []readSample
	if len(on) > 1 {
		read = s.batch(ctx, on, now)
	}
	for i, src := range on {
		var r readSample
		if i < len(read) {
			r = read[i]
			if r.err = ctx.Err(); r.err == nil && r.ok && src.more != nil {
				qctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
				r.err = src.more(qctx, s.conn, &r.smp)
				cancel()
			}
		} else {
			r = s.runOne(ctx, src, now)
		}
		var stop bool
		if out, stop = s.settle(ctx, src, r, now, out); stop {
			return out
		}
	}
	return out
}

// readSample is what a source's query gave.
type readSample struct {
	smp store.Sample
	ok  bool
	err error
}

// batch sends the sources' queries in one round trip (one simple-protocol
// Query message, the statements joined by "\n;", as pgx's Batch sends them
// in that mode) and reads their results in order, up to the first that
// fails (its error is left out).
func (s *server) batch(ctx context.Context, srcs []*serverSource, now time.Time) []readSample {
	if !slices.Equal(srcs, s.batchOf) {
		qs := make([]string, len(srcs))
		for i, src := range srcs {
			qs[i] = src.query
		}
		s.batchOf, s.batchSQL = slices.Clone(srcs), strings.Join(qs, "\n;")
	}
	bctx, cancel := context.WithTimeout(ctx, time.Duration(len(srcs))*s.opts.QueryTimeout)
	defer cancel()
	mrr := s.conn.PgConn().Exec(bctx, s.batchSQL)
	out := make([]readSample, 0, len(srcs))
	for _, src := range srcs {
		if !mrr.NextResult() {
			break
		}
		smp, ok, err := src.read(mrr.ResultReader(), now)
		if err != nil {
			break
		}
		out = append(out, readSample{smp: smp, ok: ok})
	}
	_ = mrr.Close() // a failure is the next source's to meet, alone
	return out
}

// runOne runs one source's query (and more) under its own deadline.
func (s *server) runOne(ctx context.Context, src *serverSource, now time.Time) readSample {
	qctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	mrr := s.conn.PgConn().Exec(qctx, src.query)
	var r readSample
	if mrr.NextResult() {
		r.smp, r.ok, r.err = src.read(mrr.ResultReader(), now)
	}
	if err := mrr.Close(); r.err == nil {
		r.err = err
	}
	if r.err == nil && r.ok && src.more != nil {
		r.err = src.more(qctx, s.conn, &r.smp)
	}
	return r
}

// settle adds what a source gave to out: its sample, or a note on its
// failure (once); stop says the tick ends there (stopping, or the
// connection is lost).
func (s *server) settle(ctx context.Context, src *serverSource, r readSample, now time.Time, out []store.Sample) (_ []store.Sample, stop bool) {
	switch err := r.err; {
	case err == nil:
		if r.ok {
			r.smp.Time, r.smp.Source = now, src.name
			out = append(out, r.smp)
		}
		return out, false
	case ctx.Err() != nil:
		return out, true // stopping
	case errors.Is(err, errSkip) || unavailable(err):
		src.off = true
		return append(out, noteSample(now, src.name, src.name+": "+skipReason(err)+", skipped", store.SeverityInfo)), false
	case s.conn.IsClosed():
		s.conn, s.lost = nil, true
		return append(out, noteSample(now, "server", "server: connection lost, reconnecting: "+pgerr.Describe(err), store.SeverityWarning)), true
	}
	if msg := src.name + ": " + pgerr.Describe(r.err); msg != s.lastErr {
		s.lastErr = msg
		out = append(out, noteSample(now, src.name, msg, store.SeverityWarning))
	}
	return out, false
}

// unavailable reports whether err means the source cannot work on this
// server: not permitted, missing relation, function or column, or an
// extension not loaded.
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "42501", "42P01", "42883", "42703", "55000", "0A000":
		return true
	}
	return false
}

func skipReason(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if pe.Code == "42501" {
			return "not permitted (" + pe.Message + ")"
		}
		return pe.Message
	}
	return strings.TrimPrefix(err.Error(), errSkip.Error()+": ")
}

func noteSample(now time.Time, source, note, severity string) store.Sample {
	return store.Sample{Time: now, Source: source, Note: note, Labels: map[string]string{"severity": severity}}
}

// totals returns the run totals of the server's counters, for findings.
func (s *server) totals() *totals {
	t := &totals{counts: map[string]float64{}, maxConns: s.maxConns}
	for _, c := range []*counters{s.db, s.ckpt} {
		for i, n := range c.names {
			if c.counted[i] {
				t.counts[n] = c.total[i]
			}
		}
	}
	return t
}

// totals are the server's counters summed over the run.
type totals struct {
	counts   map[string]float64 // pg_stat_database and checkpoint counters, by column name
	maxConns int                // connections available to ordinary roles
}

// counters turns cumulative counters, one per name, into deltas between
// observations and totals over the run. A counter that goes down
// (statistics reset) restarts from its new value. An observation is read
// into cur, then given to restarted or update.
type counters struct {
	names   []string
	cur     []float64 // the observation being made
	prev    []float64 // the previous one; nil before the first
	prevAt  time.Time
	delta   []float64 // update's deltas; below zero: the counter went down, no delta
	total   []float64
	counted []bool // total[i] has had a delta
}

func newCounters(names ...string) *counters {
	n := len(names)
	return &counters{names: names, cur: make([]float64, n), delta: make([]float64, n), total: make([]float64, n), counted: make([]bool, n)}
}

// has reports whether update gave counter i a delta.
func (c *counters) has(i int) bool { return !(c.delta[i] < 0) }

// get is counter i's delta, 0 when it has none.
func (c *counters) get(i int) float64 {
	if c.has(i) {
		return c.delta[i]
	}
	return 0
}

// keep makes cur the previous observation, taken at now.
func (c *counters) keep(now time.Time) {
	prev := c.prev
	if prev == nil {
		prev = make([]float64, len(c.cur))
	}
	c.prev, c.prevAt, c.cur = c.cur, now, prev
}

// startedKey is the observation of the server's start time (seconds since
// the epoch) that counters.restarted compares.
const startedKey = "postmaster_start"

// restarted reports whether the server started again since the previous
// observation (cur[i], i the index of startedKey, is
// pg_postmaster_start_time). Then cur replaces the previous observation
// without counting: what happened across the restart (crash recovery, its
// end-of-recovery checkpoint, reset statistics) is not the run's.
func (c *counters) restarted(now time.Time, i int) bool {
	if c.prev == nil || c.prev[i] == c.cur[i] {
		return false
	}
	c.keep(now)
	return true
}

// update records cur and sets the deltas since the previous observation
// (has, get); it returns the seconds between them, and ok false on the
// first observation.
func (c *counters) update(now time.Time) (secs float64, ok bool) {
	had, prevAt := c.prev != nil, c.prevAt
	c.keep(now)
	if !had {
		return 0, false
	}
	secs = now.Sub(prevAt).Seconds()
	if secs <= 0 {
		return 0, false
	}
	for i, v := range c.prev { // the observation just kept
		p := c.cur[i] // the one before it
		if v < p {
			c.delta[i] = -1
			continue
		}
		c.delta[i] = v - p
		c.total[i] += v - p
		c.counted[i] = true
	}
	return secs, true
}

var databaseColumns = []string{"xact_commit", "xact_rollback", "deadlocks", "conflicts", "blks_hit", "blks_read",
	"temp_files", "temp_bytes", "tup_returned", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted"}

// countColumn says whether a column is reported as a count in the interval, not a rate.
func countColumn(c string) bool { return c == "deadlocks" || c == "conflicts" || c == "temp_files" }

func (s *server) sampleDatabase() *serverSource {
	query := "select coalesce(" + strings.Join(databaseColumns, ", 0)::float8, coalesce(") + ", 0)::float8" +
		" from pg_stat_database where datname = current_database()"
	s.db = newCounters(databaseColumns...)
	keys := make([]string, len(databaseColumns)) // each column's series
	for i, c := range databaseColumns {
		keys[i] = sampled.Server + c + "_per_s"
		if countColumn(c) {
			keys[i] = sampled.Server + c
		}
	}
	col := func(name string) int { return slices.Index(databaseColumns, name) }
	commit, rollback, hit, read := col("xact_commit"), col("xact_rollback"), col("blks_hit"), col("blks_read")
	return &serverSource{name: "pg_stat_database", query: query, read: func(rr *pgconn.ResultReader, now time.Time) (store.Sample, bool, error) {
		c := s.db
		if err := oneRow(rr, c.cur); err != nil {
			if errors.Is(err, errNoRows) {
				return store.Sample{}, false, fmt.Errorf("%w: no row for this database in pg_stat_database", errSkip)
			}
			return store.Sample{}, false, err
		}
		secs, ok := c.update(time.Now())
		if !ok {
			return store.Sample{}, false, nil
		}
		out := make(map[string]float64, len(keys)+2)
		for i, k := range databaseColumns {
			switch {
			case !c.has(i):
			case countColumn(k):
				out[keys[i]] = c.delta[i]
			default:
				out[keys[i]] = c.delta[i] / secs
			}
		}
		if c.has(commit) && c.has(rollback) {
			out[sampled.TPM] = (c.delta[commit] + c.delta[rollback]) / secs * 60
		}
		if h, r := c.get(hit), c.get(read); h+r > 0 {
			out[sampled.CacheHitPct] = 100 * h / (h + r)
		}
		return store.Sample{Values: out}, true, nil
	}}
}

func (s *server) sampleActivity() *serverSource {
	topN := s.opts.TopN
	maxConns := float64(s.maxConns)
	hiddenNoted, citusSeen := false, false
	stateKeys := map[string]string{} // state -> its series
	// Citus's connections between nodes are not the run's clients:
	// counted apart (pg.connections.citus_internal), once seen.
	query := `select coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), count(*)::float8,
			coalesce(application_name like '` + citusInternal + `', false)
		from pg_stat_activity
		where backend_type = 'client backend' and pid <> pg_backend_pid()
		group by 1, 2, 3, 5`
	read := func(rr *pgconn.ResultReader, now time.Time) (store.Sample, bool, error) {
		vals := map[string]float64{sampled.ConnectionsTotal: 0, sampled.ConnectionsMax: maxConns, sampled.Active: 0}
		if citusSeen {
			vals[sampled.ConnectionsCitusInternal] = 0
		}
		waits := map[string]float64{}
		var hidden bool
		err := eachRow(rr, 5, func(row [][]byte) error {
			internal, err := textBool(row[4])
			if err != nil {
				return err
			}
			n, err := textFloat(row[3])
			if err != nil {
				return err
			}
			for _, v := range row[:3] {
				if v == nil {
					return errNull
				}
			}
			if internal {
				citusSeen = true
				vals[sampled.ConnectionsCitusInternal] += n
				return nil
			}
			vals[sampled.ConnectionsTotal] += n
			state := row[0]
			if len(state) == 0 {
				state, hidden = []byte("unknown"), true
			}
			key, ok := stateKeys[string(state)]
			if !ok {
				key = sampled.Connections + seriesWord(string(state))
				stateKeys[string(state)] = key
			}
			vals[key] += n
			if string(state) != "active" {
				return nil
			}
			vals[sampled.Active] += n
			key, typ := "CPU", "CPU"
			if wtype := row[1]; len(wtype) > 0 {
				key, typ = string(wtype)+":"+string(row[2]), string(wtype)
			}
			waits[key] += n
			vals[sampled.WaitType+typ] += n
			return nil
		})
		if err != nil {
			return store.Sample{}, false, err
		}
		keys := make([]string, 0, len(waits))
		for k := range waits {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			return cmp.Or(cmp.Compare(waits[b], waits[a]), strings.Compare(a, b))
		})
		for i, k := range keys {
			if i < topN {
				vals[sampled.Wait+k] = waits[k]
			} else {
				vals[sampled.WaitOther] += waits[k]
			}
		}
		smp := store.Sample{Values: vals}
		if hidden && !hiddenNoted {
			hiddenNoted = true
			smp.Note = "activity: the state of other roles' sessions is hidden (grant pg_read_all_stats to see it)"
		}
		return smp, true, nil
	}
	return &serverSource{name: "activity", query: query, read: read}
}

func (s *server) sampleWAL() *serverSource {
	query := `select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8, 0::float8, 0::float8`
	if s.version >= 140000 {
		query = `select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8, wal_fpi::float8, wal_buffers_full::float8 from pg_stat_wal`
	}
	c := newCounters("wal_bytes", "wal_fpi", "wal_buffers_full")
	read := func(rr *pgconn.ResultReader, now time.Time) (store.Sample, bool, error) {
		if err := oneRow(rr, c.cur); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "55000" { // promoted or demoted: recovery is in progress
				return store.Sample{}, false, fmt.Errorf("%w: the server is in recovery", errSkip)
			}
			return store.Sample{}, false, err
		}
		secs, ok := c.update(time.Now())
		if !ok {
			return store.Sample{}, false, nil
		}
		vals := map[string]float64{sampled.WALBytesPerS: c.get(0) / secs}
		if s.version >= 140000 {
			vals[sampled.WALFPIPerS] = c.get(1) / secs
			vals[sampled.WALBuffersFull] = c.get(2)
		}
		return store.Sample{Values: vals}, true, nil
	}
	return &serverSource{name: "wal", query: query, read: read}
}

func (s *server) sampleCheckpoints() *serverSource {
	query := `select checkpoints_timed::float8, checkpoints_req::float8, checkpoint_write_time, checkpoint_sync_time,
		buffers_checkpoint::float8, buffers_clean::float8, maxwritten_clean::float8, buffers_backend::float8,
		extract(epoch from pg_postmaster_start_time())::float8
		from pg_stat_bgwriter`
	if s.version >= 170000 {
		// 17 moved the checkpointer's counters to pg_stat_checkpointer and
		// dropped buffers_backend: pg_stat_io's relation writes by every
		// process but the checkpointer and the background writer are what
		// it counted.
		query = `select c.num_timed::float8, c.num_requested::float8, c.write_time, c.sync_time,
			c.buffers_written::float8, b.buffers_clean::float8, b.maxwritten_clean::float8,
			(select coalesce(sum(writes), 0) from pg_stat_io where object = 'relation'
				and backend_type not in ('checkpointer', 'background writer'))::float8,
			extract(epoch from pg_postmaster_start_time())::float8
			from pg_stat_checkpointer c, pg_stat_bgwriter b`
	}
	s.ckpt = newCounters("checkpoints_timed", "checkpoints_req", "checkpoint_write_ms", "checkpoint_sync_ms",
		"maxwritten_clean", "buffers_checkpoint", "buffers_clean", "buffers_backend", startedKey)
	const counts, started = 5, 8 // the first five are counts in the interval, the next three rates
	// the query's columns, in the counters' order
	order := []int{0, 1, 2, 3, 6, 4, 5, 7, 8}
	keys := make([]string, started)
	for i, n := range s.ckpt.names[:started] {
		keys[i] = sampled.Server + n
		if i >= counts {
			keys[i] += "_per_s"
		}
	}
	row := make([]float64, len(order))
	read := func(rr *pgconn.ResultReader, now time.Time) (store.Sample, bool, error) {
		c := s.ckpt
		if err := oneRow(rr, row); err != nil {
			return store.Sample{}, false, err
		}
		for i, col := range order {
			c.cur[i] = row[col]
		}
		if c.restarted(time.Now(), started) {
			// The checkpoints since the last sample include the restart's
			// (end-of-recovery, shutdown): none of them is counted.
			at := time.Unix(int64(c.prev[started]), 0).UTC().Format("15:04:05")
			return noteSample(now, "checkpoints", "checkpoints: the server restarted at "+at+
				" UTC; its restart checkpoints are not counted", store.SeverityInfo), true, nil
		}
		secs, ok := c.update(time.Now())
		if !ok {
			return store.Sample{}, false, nil
		}
		out := make(map[string]float64, len(keys))
		for i, k := range keys {
			switch {
			case !c.has(i):
			case i < counts:
				out[k] = c.delta[i]
			default:
				out[k] = c.delta[i] / secs
			}
		}
		return store.Sample{Values: out}, true, nil
	}
	return &serverSource{name: "checkpoints", query: query, read: read}
}

const locksQuery = `select count(*) filter (where not granted)::float8, count(*)::float8 from pg_locks`

func readLocks(rr *pgconn.ResultReader, now time.Time) (store.Sample, bool, error) {
	var v [2]float64
	if err := oneRow(rr, v[:]); err != nil {
		return store.Sample{}, false, err
	}
	return store.Sample{Values: map[string]float64{sampled.LocksWaiting: v[0], sampled.LocksTotal: v[1]}}, true, nil
}

const replicationQuery = `select coalesce(nullif(application_name, ''), host(client_addr), pid::text), pid,
	pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::float8,
	extract(epoch from write_lag)::float8, extract(epoch from flush_lag)::float8, extract(epoch from replay_lag)::float8
	from pg_stat_replication order by 1, 2`

// replicationSuffixes name the replication query's lag columns (3 to 6).
var replicationSuffixes = [4]string{sampled.LagBytes, ".write_lag_s", ".flush_lag_s", ".replay_lag_s"}

func readReplication(rr *pgconn.ResultReader, now time.Time) (store.Sample, bool, error) {
	vals := map[string]float64{}
	labels := map[string]string{}
	n := 0
	err := eachRow(rr, 6, func(row [][]byte) error {
		name, err := textString(row[0])
		if err != nil {
			return err
		}
		pid, err := textInt(row[1], 32)
		if err != nil {
			return err
		}
		var lags [4]float64
		var have [4]bool
		for i, v := range row[2:] {
			if lags[i], have[i], err = textFloatOrNull(v); err != nil {
				return err
			}
		}
		n++
		key := sampled.Replication + seriesWord(name)
		if _, dup := labels[key]; dup {
			key += "_" + strconv.Itoa(int(pid))
		}
		labels[key] = name
		for i, suffix := range replicationSuffixes {
			if have[i] {
				vals[key+suffix] = lags[i]
			}
		}
		return nil
	})
	if err != nil || n == 0 {
		return store.Sample{}, false, err
	}
	vals[sampled.ReplicationStandbys] = float64(n)
	return store.Sample{Values: vals, Labels: labels}, true, nil
}

// stmtStat is one statement's cumulative counters.
type stmtStat struct{ calls, ms float64 }

func (s *server) sampleStatements() *serverSource {
	topN := s.opts.TopN
	var prev map[int64]stmtStat
	var prevAt time.Time
	texts := map[int64]string{}
	var top []int64 // the last sample's top statements, whose texts more adds
	query := `select queryid, sum(calls)::float8, sum(total_exec_time)::float8
		from pg_stat_statements(false)
		where dbid = (select oid from pg_database where datname = current_database()) and queryid is not null
		group by queryid`
	read := func(rr *pgconn.ResultReader, now time.Time) (store.Sample, bool, error) {
		cur := make(map[int64]stmtStat, len(prev))
		if err := eachRow(rr, 3, func(row [][]byte) error {
			id, err := textInt(row[0], 64)
			if err != nil {
				return err
			}
			var v [2]float64
			if err := floats(row[1:], v[:]); err != nil {
				return err
			}
			cur[id] = stmtStat{calls: v[0], ms: v[1]}
			return nil
		}); err != nil {
			return store.Sample{}, false, err
		}
		at := time.Now()
		last, lastAt := prev, prevAt
		prev, prevAt = cur, at
		if last == nil {
			return store.Sample{}, false, nil
		}
		secs := at.Sub(lastAt).Seconds()
		type delta struct {
			id        int64
			calls, ms float64
		}
		var ds []delta
		var totalMS float64
		for id, c := range cur {
			p := last[id] // a new statement starts from zero
			if c.ms < p.ms || c.calls < p.calls {
				p = stmtStat{} // reset or evicted and back
			}
			if d := (delta{id, c.calls - p.calls, c.ms - p.ms}); d.calls > 0 || d.ms > 0 {
				ds = append(ds, d)
				totalMS += d.ms
			}
		}
		slices.SortFunc(ds, func(a, b delta) int { return cmp.Or(cmp.Compare(b.ms, a.ms), cmp.Compare(a.id, b.id)) })
		vals := map[string]float64{sampled.StmtTotalTime: totalMS / secs}
		top = top[:0]
		for i, d := range ds {
			if i >= topN {
				vals[sampled.StmtOtherTime] += d.ms / secs
				continue
			}
			key := sampled.Stmt + strconv.FormatInt(d.id, 10)
			vals[key+".time_ms_per_s"] = d.ms / secs
			vals[key+".calls_per_s"] = d.calls / secs
			if d.calls > 0 {
				vals[key+".mean_ms"] = d.ms / d.calls
			}
			top = append(top, d.id)
		}
		return store.Sample{Values: vals}, true, nil
	}
	more := func(ctx context.Context, conn *pgx.Conn, smp *store.Sample) error {
		var missing []int64
		for _, id := range top {
			if _, ok := texts[id]; !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			if err := statementTexts(ctx, conn, missing, texts); err != nil {
				return err
			}
		}
		smp.Labels = map[string]string{}
		for _, id := range top {
			smp.Labels[sampled.Stmt+strconv.FormatInt(id, 10)] = texts[id]
		}
		return nil
	}
	return &serverSource{name: "pg_stat_statements", query: query, read: read, more: more}
}

// statementTexts reads the texts of the statements ids into texts, one
// line, at most 300 characters each.
func statementTexts(ctx context.Context, conn *pgx.Conn, ids []int64, texts map[int64]string) error {
	rows, err := conn.Query(ctx, `select distinct on (queryid) queryid, coalesce(query, '')
		from pg_stat_statements(true)
		where dbid = (select oid from pg_database where datname = current_database()) and queryid = any($1)
		order by queryid`, ids)
	if err != nil {
		return err
	}
	var id int64
	var text string
	_, err = pgx.ForEachRow(rows, []any{&id, &text}, func() error {
		text = strings.Join(strings.Fields(text), " ")
		if r := []rune(text); len(r) > 300 {
			text = string(r[:300]) + "…"
		}
		texts[id] = text
		return nil
	})
	for _, id := range ids {
		if _, ok := texts[id]; !ok && err == nil {
			texts[id] = "" // gone already: do not ask again
		}
	}
	return err
}

// seriesWord makes a word usable inside a series name, a CSV header and a
// file name: letters, digits, '_' and '-' kept, runs of anything else
// (a host:port's '.' and ':') become one '_'.
func seriesWord(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	out := strings.Trim(b.String(), "_")
	if out == "" {
		return "unnamed"
	}
	return out
}
