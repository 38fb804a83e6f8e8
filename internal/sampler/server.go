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

	db, ckpt *counters // run totals of pg_stat_database and checkpoint counters
}

// serverSource is one query on the server, made into a sample.
type serverSource struct {
	name string
	off  bool // skipped; its note has been emitted
	// query is the source's statement, sent with the other sources' in
	// one round trip.
	query string
	// read makes the query's rows into the source's sample; ok is false
	// when there is nothing to report yet (the first call of a source of
	// deltas).
	read func(rows pgx.Rows, now time.Time) (smp store.Sample, ok bool, err error)
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
	s := &server{opts: opts, cfg: cfg, db: newCounters(), ckpt: newCounters()}
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

// batch sends the sources' queries in one round trip and reads their
// results in order, up to the first that fails (its error is left out).
func (s *server) batch(ctx context.Context, srcs []*serverSource, now time.Time) []readSample {
	bctx, cancel := context.WithTimeout(ctx, time.Duration(len(srcs))*s.opts.QueryTimeout)
	defer cancel()
	b := &pgx.Batch{}
	for _, src := range srcs {
		b.Queue(src.query)
	}
	br := s.conn.SendBatch(bctx, b)
	var out []readSample
	for _, src := range srcs {
		rows, err := br.Query()
		if err != nil {
			break
		}
		smp, ok, err := src.read(rows, now)
		if err != nil {
			break
		}
		out = append(out, readSample{smp: smp, ok: ok})
	}
	_ = br.Close() // a failure is the next source's to meet, alone
	return out
}

// runOne runs one source's query (and more) under its own deadline.
func (s *server) runOne(ctx context.Context, src *serverSource, now time.Time) readSample {
	qctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	rows, err := s.conn.Query(qctx, src.query)
	if err != nil {
		return readSample{err: err}
	}
	var r readSample
	r.smp, r.ok, r.err = src.read(rows, now)
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

// scanOne scans the one row of rows into dst, as QueryRow does:
// pgx.ErrNoRows when there is none.
func scanOne(rows pgx.Rows, dst ...any) error {
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := rows.Scan(dst...); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
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
	for k, v := range s.db.total {
		t.counts[k] = v
	}
	for k, v := range s.ckpt.total {
		t.counts[k] = v
	}
	return t
}

// totals are the server's counters summed over the run.
type totals struct {
	counts   map[string]float64 // pg_stat_database and checkpoint counters, by column name
	maxConns int                // connections available to ordinary roles
}

// counters turns cumulative counters into deltas between observations and
// totals over the run. A counter that goes down (statistics reset) restarts
// from its new value.
type counters struct {
	prev   map[string]float64
	prevAt time.Time
	total  map[string]float64
}

func newCounters() *counters { return &counters{total: map[string]float64{}} }

// startedKey is the observation of the server's start time (seconds since
// the epoch) that counters.restarted compares.
const startedKey = "postmaster_start"

// restarted reports whether the server started again since the previous
// observation (cur[startedKey] is pg_postmaster_start_time). Then cur
// replaces the previous observation without counting: what happened
// across the restart (crash recovery, its end-of-recovery checkpoint, reset
// statistics) is not the run's.
func (c *counters) restarted(now time.Time, cur map[string]float64) bool {
	prev, had := c.prev[startedKey]
	if !had || prev == cur[startedKey] {
		return false
	}
	c.prev, c.prevAt = cur, now
	return true
}

// update records cur and returns the deltas since the previous observation
// and the seconds between them; ok is false on the first observation.
func (c *counters) update(now time.Time, cur map[string]float64) (d map[string]float64, secs float64, ok bool) {
	prev, prevAt := c.prev, c.prevAt
	c.prev, c.prevAt = cur, now
	if prev == nil {
		return nil, 0, false
	}
	secs = now.Sub(prevAt).Seconds()
	if secs <= 0 {
		return nil, 0, false
	}
	d = make(map[string]float64, len(cur))
	for k, v := range cur {
		p, had := prev[k]
		if !had || v < p {
			continue
		}
		d[k] = v - p
		c.total[k] += v - p
	}
	return d, secs, true
}

var databaseColumns = []string{"xact_commit", "xact_rollback", "deadlocks", "conflicts", "blks_hit", "blks_read",
	"temp_files", "temp_bytes", "tup_returned", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted"}

// countColumn says whether a column is reported as a count in the interval, not a rate.
func countColumn(c string) bool { return c == "deadlocks" || c == "conflicts" || c == "temp_files" }

func (s *server) sampleDatabase() *serverSource {
	query := "select coalesce(" + strings.Join(databaseColumns, ", 0)::float8, coalesce(") + ", 0)::float8" +
		" from pg_stat_database where datname = current_database()"
	read := func(rows pgx.Rows, now time.Time) (store.Sample, bool, error) {
		vals := make([]float64, len(databaseColumns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := scanOne(rows, ptrs...); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.Sample{}, false, fmt.Errorf("%w: no row for this database in pg_stat_database", errSkip)
			}
			return store.Sample{}, false, err
		}
		cur := make(map[string]float64, len(vals))
		for i, c := range databaseColumns {
			cur[c] = vals[i]
		}
		d, secs, ok := s.db.update(time.Now(), cur)
		if !ok {
			return store.Sample{}, false, nil
		}
		out := map[string]float64{}
		for k, v := range d {
			if countColumn(k) {
				out[sampled.Server+k] = v
			} else {
				out[sampled.Server+k+"_per_s"] = v / secs
			}
		}
		if c, okc := d["xact_commit"]; okc {
			if r, okr := d["xact_rollback"]; okr {
				out[sampled.TPM] = (c + r) / secs * 60
			}
		}
		if h, r := d["blks_hit"], d["blks_read"]; h+r > 0 {
			out[sampled.CacheHitPct] = 100 * h / (h + r)
		}
		return store.Sample{Values: out}, true, nil
	}
	return &serverSource{name: "pg_stat_database", query: query, read: read}
}

func (s *server) sampleActivity() *serverSource {
	topN := s.opts.TopN
	maxConns := float64(s.maxConns)
	hiddenNoted, citusSeen := false, false
	// Citus's connections between nodes are not the run's clients:
	// counted apart (pg.connections.citus_internal), once seen.
	query := `select coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), count(*)::float8,
			coalesce(application_name like '` + citusInternal + `', false)
		from pg_stat_activity
		where backend_type = 'client backend' and pid <> pg_backend_pid()
		group by 1, 2, 3, 5`
	read := func(rows pgx.Rows, now time.Time) (store.Sample, bool, error) {
		vals := map[string]float64{sampled.ConnectionsTotal: 0, sampled.ConnectionsMax: maxConns, sampled.Active: 0}
		if citusSeen {
			vals[sampled.ConnectionsCitusInternal] = 0
		}
		waits := map[string]float64{}
		var hidden, internal bool
		var state, wtype, wevent string
		var n float64
		_, err := pgx.ForEachRow(rows, []any{&state, &wtype, &wevent, &n, &internal}, func() error {
			if internal {
				citusSeen = true
				vals[sampled.ConnectionsCitusInternal] += n
				return nil
			}
			vals[sampled.ConnectionsTotal] += n
			if state == "" {
				state, hidden = "unknown", true
			}
			vals[sampled.Connections+seriesWord(state)] += n
			if state != "active" {
				return nil
			}
			vals[sampled.Active] += n
			key, typ := "CPU", "CPU"
			if wtype != "" {
				key, typ = wtype+":"+wevent, wtype
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
	c := newCounters()
	read := func(rows pgx.Rows, now time.Time) (store.Sample, bool, error) {
		var lsn, fpi, full float64
		if err := scanOne(rows, &lsn, &fpi, &full); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "55000" { // promoted or demoted: recovery is in progress
				return store.Sample{}, false, fmt.Errorf("%w: the server is in recovery", errSkip)
			}
			return store.Sample{}, false, err
		}
		d, secs, ok := c.update(time.Now(), map[string]float64{"wal_bytes": lsn, "wal_fpi": fpi, "wal_buffers_full": full})
		if !ok {
			return store.Sample{}, false, nil
		}
		vals := map[string]float64{sampled.WALBytesPerS: d["wal_bytes"] / secs}
		if s.version >= 140000 {
			vals[sampled.WALFPIPerS] = d["wal_fpi"] / secs
			vals[sampled.WALBuffersFull] = d["wal_buffers_full"]
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
	names := []string{"checkpoints_timed", "checkpoints_req", "checkpoint_write_ms", "checkpoint_sync_ms",
		"buffers_checkpoint", "buffers_clean", "maxwritten_clean", "buffers_backend", startedKey}
	read := func(rows pgx.Rows, now time.Time) (store.Sample, bool, error) {
		vals := make([]float64, len(names))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := scanOne(rows, ptrs...); err != nil {
			return store.Sample{}, false, err
		}
		cur := make(map[string]float64, len(names))
		for i, n := range names {
			cur[n] = vals[i]
		}
		if s.ckpt.restarted(time.Now(), cur) {
			// The checkpoints since the last sample include the restart's
			// (end-of-recovery, shutdown): none of them is counted.
			at := time.Unix(int64(cur[startedKey]), 0).UTC().Format("15:04:05")
			return noteSample(now, "checkpoints", "checkpoints: the server restarted at "+at+
				" UTC; its restart checkpoints are not counted", store.SeverityInfo), true, nil
		}
		d, secs, ok := s.ckpt.update(time.Now(), cur)
		if !ok {
			return store.Sample{}, false, nil
		}
		out := map[string]float64{}
		for _, n := range []string{"checkpoints_timed", "checkpoints_req", "checkpoint_write_ms", "checkpoint_sync_ms", "maxwritten_clean"} {
			if v, ok := d[n]; ok {
				out[sampled.Server+n] = v
			}
		}
		for _, n := range []string{"buffers_checkpoint", "buffers_clean", "buffers_backend"} {
			if v, ok := d[n]; ok {
				out[sampled.Server+n+"_per_s"] = v / secs
			}
		}
		return store.Sample{Values: out}, true, nil
	}
	return &serverSource{name: "checkpoints", query: query, read: read}
}

const locksQuery = `select count(*) filter (where not granted)::float8, count(*)::float8 from pg_locks`

func readLocks(rows pgx.Rows, now time.Time) (store.Sample, bool, error) {
	var waiting, total float64
	if err := scanOne(rows, &waiting, &total); err != nil {
		return store.Sample{}, false, err
	}
	return store.Sample{Values: map[string]float64{sampled.LocksWaiting: waiting, sampled.LocksTotal: total}}, true, nil
}

const replicationQuery = `select coalesce(nullif(application_name, ''), host(client_addr), pid::text), pid,
	pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::float8,
	extract(epoch from write_lag)::float8, extract(epoch from flush_lag)::float8, extract(epoch from replay_lag)::float8
	from pg_stat_replication order by 1, 2`

func readReplication(rows pgx.Rows, now time.Time) (store.Sample, bool, error) {
	vals := map[string]float64{}
	labels := map[string]string{}
	var name string
	var pid int32
	var lag, write, flush, replay *float64
	n := 0
	_, err := pgx.ForEachRow(rows, []any{&name, &pid, &lag, &write, &flush, &replay}, func() error {
		n++
		key := sampled.Replication + seriesWord(name)
		if _, dup := labels[key]; dup {
			key += "_" + strconv.Itoa(int(pid))
		}
		labels[key] = name
		for suffix, v := range map[string]*float64{sampled.LagBytes: lag, ".write_lag_s": write, ".flush_lag_s": flush, ".replay_lag_s": replay} {
			if v != nil {
				vals[key+suffix] = *v
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
	read := func(rows pgx.Rows, now time.Time) (store.Sample, bool, error) {
		cur := map[int64]stmtStat{}
		var id int64
		var st stmtStat
		if _, err := pgx.ForEachRow(rows, []any{&id, &st.calls, &st.ms}, func() error {
			cur[id] = st
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
