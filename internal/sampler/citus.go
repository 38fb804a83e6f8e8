package sampler

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/sampled"
	"github.com/pgarena/pgarena/internal/store"
)

// CitusWorker is a Citus worker node to sample: Name labels its series
// (host:port), Config reaches the workload's database there (the
// coordinator's credentials, the node's address from pg_dist_node).
type CitusWorker struct {
	Name   string
	Config *pgx.ConnConfig
}

// citusInternal matches the application_name of the connections Citus
// opens between nodes ("citus_internal gpid=..."): they are not the
// run's clients.
const citusInternal = "citus_internal%"

// citusSource samples each worker: its database's commits, rollbacks and
// rows read per second (pg_stat_database), its WAL bytes per second, its
// client connections (Citus's internal ones apart), its active and
// waiting sessions with their top wait events (as the coordinator's
// activity source counts them) and, for a worker on this host, its
// postmaster's process-tree CPU. Series citus.<worker>.{xact_commit_per_s,
// xact_rollback_per_s, rows_read_per_s, wal_bytes_per_s,
// connections.client, connections.citus_internal, active, waiting,
// wait.<type>:<event>, wait.other, wait_type.<type>, cpu_cores, cpu_pct}.
type citusSource struct {
	workers []*citusWorkerConn
	timeout time.Duration
	topN    int
	proc    procFS
	ncpu    int
	notes   []string // to say at the next sample
}

type citusWorkerConn struct {
	CitusWorker
	conn   *pgx.Conn
	counts *counters
	total  map[string]float64 // run totals of the deltas
	noted  string             // last error noted

	local      bool    // the address is this host's (onThisHost)
	postmaster int     // its pid in this host's /proc; 0 when not found
	cpuPrev    float64 // CPU seconds of its process tree at cpuAt
	cpuAt      time.Time
}

const citusQuery = `select coalesce(xact_commit, 0)::float8, coalesce(xact_rollback, 0)::float8,
	(coalesce(tup_returned, 0) + coalesce(tup_fetched, 0))::float8,
	(select count(*) from pg_stat_activity a where a.datname = current_database() and backend_type = 'client backend'
		and coalesce(application_name, '') not like '` + citusInternal + `' and pid <> pg_backend_pid())::float8,
	(select count(*) from pg_stat_activity a where a.datname = current_database() and backend_type = 'client backend'
		and application_name like '` + citusInternal + `')::float8,
	pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8
	from pg_stat_database where datname = current_database()`

// citusWaitQuery counts the worker's active sessions by wait event, Citus's
// internal ones included: they do the distributed queries' work there.
const citusWaitQuery = `select coalesce(wait_event_type, ''), coalesce(wait_event, ''), count(*)::float8
	from pg_stat_activity where datname = current_database() and backend_type = 'client backend'
		and state = 'active' and pid <> pg_backend_pid()
	group by 1, 2`

func newCitusSource(ws []CitusWorker, timeout time.Duration, topN int) *citusSource {
	s := &citusSource{timeout: timeout, topN: topN}
	var procErr error
	if s.proc, procErr = newProcFS(); procErr == nil {
		var st procStat
		if st, procErr = s.proc.Stat(); procErr == nil {
			s.ncpu = len(st.CPU)
		}
	}
	for _, w := range ws {
		cfg := w.Config.Copy()
		cfg.RuntimeParams["application_name"] = AppName
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		wc := &citusWorkerConn{CitusWorker: CitusWorker{Name: w.Name, Config: cfg}, counts: newCounters(citusCounters...), total: map[string]float64{}}
		switch {
		case !onThisHost(cfg.Host):
			s.notes = append(s.notes, "citus worker "+w.Name+": host CPU not sampled: the worker is on another host (pgarena reads this host's /proc only)")
		case procErr != nil:
			s.notes = append(s.notes, "citus worker "+w.Name+": host CPU not sampled: "+procErr.Error())
		default:
			wc.local = true
		}
		s.workers = append(s.workers, wc)
	}
	return s
}

// sample reads every worker; a worker that cannot be reached is a note
// (once per distinct error) and is tried again next time.
func (s *citusSource) sample(ctx context.Context, now time.Time) []store.Sample {
	var out []store.Sample
	for _, n := range s.notes {
		out = append(out, noteSample(now, "citus_workers", n, store.SeverityInfo))
	}
	s.notes = nil
	cpu, cpuAt := s.treeCPU(), time.Now()
	for _, w := range s.workers {
		qctx, cancel := context.WithTimeout(ctx, s.timeout)
		smp, ok, err := w.sample(qctx, s.proc, s.topN)
		cancel()
		if ctx.Err() != nil {
			return out
		}
		if err != nil {
			if msg := "citus worker " + w.Name + ": " + pgerr.Describe(err); msg != w.noted {
				w.noted = msg
				out = append(out, noteSample(now, "citus_workers", msg, store.SeverityWarning))
			}
			continue
		}
		if ok {
			w.addCPU(smp.Values, cpu, cpuAt, s.ncpu)
			if smp.Note != "" {
				out = append(out, noteSample(now, "citus_workers", smp.Note, store.SeverityInfo))
				smp.Note = ""
			}
			smp.Time, smp.Source = now, "citus_workers"
			smp.Labels = map[string]string{"worker": w.Name}
			out = append(out, smp)
		}
	}
	return out
}

// citusCounters are a worker's counters, as citusQuery has them.
var citusCounters = []string{"xact_commit", "xact_rollback", "rows_read", "wal_bytes"}

func (w *citusWorkerConn) sample(ctx context.Context, fs procFS, topN int) (store.Sample, bool, error) {
	var note string
	if w.conn == nil || w.conn.IsClosed() {
		conn, err := pgx.ConnectConfig(ctx, w.Config)
		if err != nil {
			return store.Sample{}, false, err
		}
		w.conn = conn
		if w.local {
			note = w.findPostmaster(ctx, fs)
		}
	}
	var commit, rollback, rows, clients, internal, wal float64
	if err := w.conn.QueryRow(ctx, citusQuery).Scan(&commit, &rollback, &rows, &clients, &internal, &wal); err != nil {
		return store.Sample{}, false, err
	}
	p := sampled.CitusWorker(seriesWord(w.Name))
	vals := map[string]float64{p + sampled.CitusConnectionsClient: clients, p + sampled.CitusConnectionsInternal: internal}
	if err := w.sampleWaits(ctx, p, topN, vals); err != nil {
		return store.Sample{}, false, err
	}
	c := w.counts
	c.cur[0], c.cur[1], c.cur[2], c.cur[3] = commit, rollback, rows, wal
	if secs, ok := c.update(time.Now()); ok {
		for i, k := range citusCounters {
			if c.has(i) {
				vals[p+k+"_per_s"] = c.delta[i] / secs
				w.total[k] += c.delta[i]
			}
		}
	}
	return store.Sample{Values: vals, Note: note}, true, nil
}

// sampleWaits adds the worker's active and waiting sessions and its top
// waits, named as the coordinator's are (server.go's activity source):
// <p>wait.<type>:<event> for the top N ("CPU" when not waiting), the rest
// in <p>wait.other, and <p>wait_type.<type> for every type.
func (w *citusWorkerConn) sampleWaits(ctx context.Context, p string, topN int, vals map[string]float64) error {
	rows, err := w.conn.Query(ctx, citusWaitQuery)
	if err != nil {
		return err
	}
	vals[p+"active"], vals[p+"waiting"] = 0, 0
	waits := map[string]float64{}
	var wtype, wevent string
	var n float64
	if _, err := pgx.ForEachRow(rows, []any{&wtype, &wevent, &n}, func() error {
		vals[p+"active"] += n
		key, typ := "CPU", "CPU"
		if wtype != "" {
			key, typ = wtype+":"+wevent, wtype
			vals[p+"waiting"] += n
		}
		waits[key] += n
		vals[p+"wait_type."+typ] += n
		return nil
	}); err != nil {
		return err
	}
	keys := slices.SortedFunc(maps.Keys(waits), func(a, b string) int {
		return cmp.Or(cmp.Compare(waits[b], waits[a]), strings.Compare(a, b))
	})
	for i, k := range keys {
		if i < topN {
			vals[p+sampled.CitusWait+k] = waits[k]
		} else {
			vals[p+"wait.other"] += waits[k]
		}
	}
	return nil
}

// findPostmaster looks for the worker's postmaster in this host's /proc
// through the sampler's own backend, on each new connection (a restarted
// worker has a new one); it returns a note when it is not found.
func (w *citusWorkerConn) findPostmaster(ctx context.Context, fs procFS) string {
	w.postmaster, w.cpuAt = 0, time.Time{}
	var pid int
	var started float64
	err := w.conn.QueryRow(ctx, `select pid, extract(epoch from backend_start)::float8 from pg_stat_activity where pid = pg_backend_pid()`).Scan(&pid, &started)
	if err == nil {
		w.postmaster, err = findPostmaster(fs, pid, started)
	}
	if err != nil {
		return "citus worker " + w.Name + ": host CPU not sampled: " + pgerr.Describe(err)
	}
	return ""
}

// treeCPU reads the process-tree CPU of the workers whose postmaster is
// known, by postmaster pid (nil when none is, or /proc cannot be read).
func (s *citusSource) treeCPU() map[int]float64 {
	roots := map[int]bool{}
	for _, w := range s.workers {
		if w.postmaster != 0 {
			roots[w.postmaster] = true
		}
	}
	if len(roots) == 0 {
		return nil
	}
	cpu, err := treeCPU(procRoot, roots)
	if err != nil {
		return nil
	}
	return cpu
}

// addCPU adds the worker's CPU in cores since the previous reading, and
// as a share of the host's CPUs: citus.<worker>.{cpu_cores,cpu_pct}. Time
// that seems to go back (a backend read before it was reaped, and then in
// its parent's cutime) counts as none.
func (w *citusWorkerConn) addCPU(vals map[string]float64, cpu map[int]float64, now time.Time, ncpu int) {
	secs, ok := cpu[w.postmaster]
	if w.postmaster == 0 || !ok {
		return
	}
	prev, prevAt := w.cpuPrev, w.cpuAt
	w.cpuPrev, w.cpuAt = secs, now
	if prevAt.IsZero() || !now.After(prevAt) {
		return
	}
	p := sampled.CitusWorker(seriesWord(w.Name))
	cores := max(0, secs-prev) / now.Sub(prevAt).Seconds()
	vals[p+sampled.CitusCPUCores] = cores
	if ncpu > 0 {
		vals[p+sampled.CitusCPUPct] = 100 * cores / float64(ncpu)
	}
}

func (s *citusSource) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, w := range s.workers {
		if w.conn != nil {
			_ = w.conn.Close(ctx)
			w.conn = nil
		}
	}
}

// findings: a worker that did much more than its share of the workers'
// work (over 1.25 times the mean of their commits, or of their rows
// read, with 2 workers over 62.5%) over the run.
func (s *citusSource) findings() []store.Finding {
	if len(s.workers) < 2 {
		return nil
	}
	var out []store.Finding
	for _, m := range []struct{ key, what string }{{"xact_commit", "transactions"}, {"rows_read", "rows read"}} {
		sum := 0.0
		for _, w := range s.workers {
			sum += w.total[m.key]
		}
		if sum == 0 {
			continue
		}
		mean := sum / float64(len(s.workers))
		var shares []string
		heavy := ""
		for _, w := range s.workers {
			share := 100 * w.total[m.key] / sum
			shares = append(shares, w.Name+" "+strconv.FormatFloat(share, 'f', 0, 64)+"%")
			if w.total[m.key] > 1.25*mean && heavy == "" {
				heavy = w.Name
			}
		}
		if heavy != "" {
			out = append(out, store.Finding{Severity: store.SeverityWarning, Kind: "citus_worker_skew",
				Message: fmt.Sprintf("citus worker %s did much more than its share of the workers' %s (%s): shards or distribution keys skewed toward it (see the topology's placements)",
					heavy, m.what, strings.Join(shares, ", "))})
		}
	}
	return out
}
