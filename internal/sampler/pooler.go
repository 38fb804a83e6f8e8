package sampler

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgarena/pgarena/internal/sampled"
	"github.com/pgarena/pgarena/internal/store"
)

// Pooler names a connection pooler to watch besides the server.
type Pooler struct {
	// Kind says how its statistics are read: "pgbouncer" or "console"
	// (SHOW POOLS and SHOW STATS on Admin: pgbouncer, odyssey), "pgpool"
	// (SHOW POOL_PROCESSES and SHOW POOL_NODES on Admin), "haproxy"
	// (show stat on StatsSocket).
	Kind        string
	Admin       *pgx.ConnConfig
	StatsSocket string
}

// Thresholds of the pooler findings.
const poolerWaitWarn = time.Second // a client waited this long for a server connection

// poolerSource samples a pooler (source "pooler"). Series:
//
//	pgbouncer, console  pooler.cl_active pooler.cl_waiting pooler.sv_active pooler.sv_idle
//	                    pooler.sv_used pooler.sv_login pooler.maxwait_s (SHOW POOLS, summed
//	                    over pools, the admin database left out; maxwait the largest);
//	                    pooler.xact_per_s pooler.query_per_s pooler.xact_time_ms
//	                    pooler.query_time_ms (means over the interval) pooler.wait_s_per_s
//	                    (client seconds spent waiting per second: clients waiting on
//	                    average) from SHOW STATS
//	pgpool              pooler.processes pooler.processes.<status> (SHOW POOL_PROCESSES)
//	                    pooler.nodes_up pooler.select_per_s (SHOW POOL_NODES)
//	haproxy             pooler.scur (client sessions) pooler.qcur (queued for a server)
//	                    pooler.sessions_per_s pooler.retries pooler.errors (show stat)
//
// Columns a version lacks are left out; unknown columns are ignored.
type poolerSource struct {
	p       Pooler
	timeout time.Duration
	every   time.Duration
	conn    *pgx.Conn
	lastErr string

	prev   map[string]float64 // counters at prevAt
	prevAt time.Time

	// For findings.
	waitSamples int       // samples with clients waiting
	waitFirst   time.Time // first such sample
	waitMost    float64   // most clients waiting at once
	maxWait     float64   // longest wait seen (s)
}

// newPoolerSource connects to a console at once, before the clients take
// every process of a pgpool (a failure is noted at the first sample).
func newPoolerSource(ctx context.Context, opts Options) *poolerSource {
	s := &poolerSource{p: *opts.Pooler, timeout: opts.QueryTimeout, every: opts.Interval}
	if s.p.Admin != nil {
		cctx, cancel := context.WithTimeout(ctx, max(opts.QueryTimeout, 5*time.Second))
		defer cancel()
		_ = s.connect(cctx)
	}
	return s
}

func (s *poolerSource) connect(ctx context.Context) error {
	cfg := s.p.Admin.Copy()
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	cfg.RuntimeParams["application_name"] = AppName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	s.conn = conn
	return nil
}

func (s *poolerSource) close() {
	if s.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = s.conn.Close(ctx)
		s.conn = nil
	}
}

// sample reads the pooler's statistics under the query deadline.
func (s *poolerSource) sample(ctx context.Context, now time.Time) []store.Sample {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var vals, counters map[string]float64
	var err error
	switch s.p.Kind {
	case "haproxy":
		vals, counters, err = haproxyStats(qctx, s.p.StatsSocket)
	default:
		vals, counters, err = s.consoleStats(qctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		if s.conn != nil && s.conn.IsClosed() {
			s.conn = nil
		}
		msg := "pooler: " + oneLine(err.Error())
		if msg == s.lastErr {
			return nil
		}
		s.lastErr = msg
		return []store.Sample{noteSample(now, "pooler", msg, store.SeverityWarning)}
	}
	s.lastErr = ""
	s.rates(now, vals, counters)
	s.watch(now, vals)
	return []store.Sample{{Time: now, Source: "pooler", Values: vals, Labels: map[string]string{"kind": s.p.Kind}}}
}

// rates turns counters into per-second rates and means since the last
// sample (none at the first, nor after a counter went back: a restart).
func (s *poolerSource) rates(now time.Time, vals, c map[string]float64) {
	prev, dt := s.prev, now.Sub(s.prevAt).Seconds()
	s.prev, s.prevAt = c, now
	if prev == nil || dt <= 0 {
		return
	}
	d := func(k string) (float64, bool) {
		cur, ok1 := c[k]
		old, ok2 := prev[k]
		if !ok1 || !ok2 || cur < old {
			return 0, false
		}
		return cur - old, true
	}
	for _, r := range []struct{ counter, series string }{{"total_xact_count", sampled.PoolerXactPerS},
		{"total_query_count", sampled.PoolerQueryPerS}, {"stot", sampled.PoolerSessionsPerS}, {"select_cnt", sampled.PoolerSelectPerS}} {
		if n, ok := d(r.counter); ok {
			vals[r.series] = n / dt
		}
	}
	if w, ok := d("total_wait_time"); ok {
		vals[sampled.PoolerWaitSPerS] = w / 1e6 / dt
	}
	for _, m := range []struct{ time, count, series string }{{"total_xact_time", "total_xact_count", sampled.PoolerXactTimeMS},
		{"total_query_time", "total_query_count", sampled.PoolerQueryTimeMS}} {
		t, ok1 := d(m.time)
		n, ok2 := d(m.count)
		if ok1 && ok2 && n > 0 {
			vals[m.series] = t / n / 1000
		}
	}
	for _, r := range []struct{ counter, series string }{{"retries", sampled.PoolerRetries}, {"errors", sampled.PoolerErrors}} {
		if n, ok := d(r.counter); ok {
			vals[r.series] = n
		}
	}
}

// watch keeps what the findings need.
func (s *poolerSource) watch(now time.Time, v map[string]float64) {
	waiting := max(v[sampled.PoolerClWaiting], v[sampled.PoolerQcur])
	if waiting > 0 {
		if s.waitSamples == 0 {
			s.waitFirst = now
		}
		s.waitSamples++
		s.waitMost = max(s.waitMost, waiting)
	}
	s.maxWait = max(s.maxWait, v[sampled.PoolerMaxwaitS])
}

// findings: clients queued in the pooler.
func (s *poolerSource) findings() []store.Finding {
	if s.waitSamples == 0 {
		return nil
	}
	sev := store.SeverityInfo
	msg := fmt.Sprintf("clients queued in the pooler for about %s (up to %.0f at once",
		(time.Duration(s.waitSamples) * s.every).Round(time.Second), s.waitMost)
	if s.maxWait > 0 {
		msg += ", maxwait " + waitText(s.maxWait)
		if s.maxWait >= poolerWaitWarn.Seconds() {
			sev = store.SeverityWarning
		}
	}
	msg += "): latency includes the wait for a server connection (a larger pool, or fewer clients)"
	return []store.Finding{{Severity: sev, Kind: "pooler_queue", Message: msg, Time: s.waitFirst}}
}

// consoleStats reads a pooler's SQL console.
func (s *poolerSource) consoleStats(ctx context.Context) (vals, counters map[string]float64, err error) {
	if s.conn == nil {
		if err := s.connect(ctx); err != nil {
			return nil, nil, err
		}
	}
	vals, counters = map[string]float64{}, map[string]float64{}
	if s.p.Kind == "pgpool" {
		return vals, counters, s.pgpoolStats(ctx, vals, counters)
	}
	pools, err := showRows(ctx, s.conn, "SHOW POOLS")
	if err != nil {
		return nil, nil, err
	}
	for _, r := range pools {
		if r.text("database") == "pgbouncer" {
			continue
		}
		for _, c := range []struct{ column, series string }{{"cl_active", sampled.PoolerClActive}, {"cl_waiting", sampled.PoolerClWaiting},
			{"sv_active", sampled.PoolerSvActive}, {"sv_idle", sampled.PoolerSvIdle}, {"sv_used", sampled.PoolerSvUsed}, {"sv_login", sampled.PoolerSvLogin}} {
			if v, ok := r.num(c.column); ok {
				vals[c.series] += v
			}
		}
		if w, ok := r.num("maxwait"); ok {
			us, _ := r.num("maxwait_us")
			vals[sampled.PoolerMaxwaitS] = max(vals[sampled.PoolerMaxwaitS], w+us/1e6)
		}
	}
	stats, err := showRows(ctx, s.conn, "SHOW STATS")
	if err != nil {
		return nil, nil, err
	}
	for _, r := range stats {
		if r.text("database") == "pgbouncer" {
			continue
		}
		for k := range r {
			if strings.HasPrefix(k, "total_") {
				if v, ok := r.num(k); ok {
					counters[k] += v
				}
			}
		}
	}
	return vals, counters, nil
}

// pgpoolStats reads SHOW POOL_PROCESSES and SHOW POOL_NODES.
func (s *poolerSource) pgpoolStats(ctx context.Context, vals, counters map[string]float64) error {
	procs, err := showRows(ctx, s.conn, "SHOW POOL_PROCESSES")
	if err != nil {
		return err
	}
	pids := map[string]bool{}
	for _, r := range procs {
		pids[r.text("pool_pid")] = true
		if st := r.text("status"); st != "" {
			vals[sampled.PoolerProcessesBy+slug(st)]++
		}
	}
	vals[sampled.PoolerProcesses] = float64(len(pids))
	nodes, err := showRows(ctx, s.conn, "SHOW POOL_NODES")
	if err != nil {
		return err
	}
	for _, r := range nodes {
		if st := r.text("status"); st == "up" || st == "waiting" {
			vals[sampled.PoolerNodesUp]++
		}
		if v, ok := r.num("select_cnt"); ok {
			counters["select_cnt"] += v
		}
	}
	return nil
}

// row is one row of a console's SHOW, by column name.
type row map[string]any

func (r row) text(k string) string {
	switch v := r[k].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

func (r row) num(k string) (float64, bool) {
	switch v := r[k].(type) {
	case int64:
		return float64(v), true
	case int32:
		return float64(v), true
	case float64:
		return v, true
	case int16:
		return float64(v), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil
	case pgtype.Numeric: // pgbouncer's counters
		f, err := v.Float64Value()
		return f.Float64, err == nil && f.Valid
	}
	return 0, false
}

func showRows(ctx context.Context, conn *pgx.Conn, q string) ([]row, error) {
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []row
	fields := rows.FieldDescriptions()
	for rows.Next() {
		vs, err := rows.Values()
		if err != nil {
			return nil, err
		}
		r := row{}
		for i, f := range fields {
			if i < len(vs) {
				r[strings.ToLower(f.Name)] = vs[i]
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	return out, nil
}

// haproxyStats reads "show stat" from haproxy's stats socket: client
// sessions (frontends), queued sessions (backends) and counters.
func haproxyStats(ctx context.Context, socket string) (vals, counters map[string]float64, err error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, "show stat\n"); err != nil {
		return nil, nil, err
	}
	return parseHaproxyStat(bufio.NewReader(conn))
}

func parseHaproxyStat(in io.Reader) (vals, counters map[string]float64, err error) {
	r := csv.NewReader(in)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("show stat: %w", err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimSpace(strings.TrimPrefix(header[0], "#"))
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	vals, counters = map[string]float64{}, map[string]float64{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("show stat: %w", err)
		}
		get := func(k string) float64 {
			if i, ok := col[k]; ok && i < len(rec) {
				f, _ := strconv.ParseFloat(rec[i], 64)
				return f
			}
			return 0
		}
		switch sv := rec[col["svname"]]; sv {
		case "FRONTEND":
			vals[sampled.PoolerScur] += get("scur")
			counters["stot"] += get("stot")
			counters["errors"] += get("ereq")
		case "BACKEND":
			vals[sampled.PoolerQcur] += get("qcur")
			counters["retries"] += get("wretr")
			counters["errors"] += get("econ") + get("eresp")
		}
	}
	return vals, counters, nil
}

// slug makes a status text a series name part ("Wait for connection" ->
// wait_for_connection).
func slug(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '_'
	}, s), "_")
}

// oneLine joins a message's lines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// bySeverity orders findings most severe first (stable).
func bySeverity(fs []store.Finding) []store.Finding {
	rank := map[string]int{store.SeverityCritical: 0, store.SeverityWarning: 1, store.SeverityInfo: 2}
	slices.SortStableFunc(fs, func(x, y store.Finding) int { return cmp.Compare(rank[x.Severity], rank[y.Severity]) })
	return fs
}

// waitText renders a wait in seconds: "2.1 s", "31 ms".
func waitText(s float64) string {
	if s >= 1 {
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.0f ms", 1000*s)
}
