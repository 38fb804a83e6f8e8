package sampler

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgerr"
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
// client connections (Citus's internal ones apart) and its active and
// waiting sessions. Series citus.<worker>.{xact_commit_per_s,
// xact_rollback_per_s, rows_read_per_s, wal_bytes_per_s,
// connections.client, connections.citus_internal, active, waiting}.
type citusSource struct {
	workers []*citusWorkerConn
	timeout time.Duration
}

type citusWorkerConn struct {
	CitusWorker
	conn   *pgx.Conn
	counts *counters
	total  map[string]float64 // run totals of the deltas
	noted  string             // last error noted
}

const citusQuery = `select coalesce(xact_commit, 0)::float8, coalesce(xact_rollback, 0)::float8,
	(coalesce(tup_returned, 0) + coalesce(tup_fetched, 0))::float8,
	(select count(*) from pg_stat_activity a where a.datname = current_database() and backend_type = 'client backend'
		and coalesce(application_name, '') not like '` + citusInternal + `' and pid <> pg_backend_pid())::float8,
	(select count(*) from pg_stat_activity a where a.datname = current_database() and backend_type = 'client backend'
		and application_name like '` + citusInternal + `')::float8,
	(select count(*) from pg_stat_activity a where a.datname = current_database() and backend_type = 'client backend'
		and state = 'active' and pid <> pg_backend_pid())::float8,
	(select count(*) from pg_stat_activity a where a.datname = current_database() and backend_type = 'client backend'
		and state = 'active' and wait_event_type is not null and pid <> pg_backend_pid())::float8,
	pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8
	from pg_stat_database where datname = current_database()`

func newCitusSource(ws []CitusWorker, timeout time.Duration) *citusSource {
	s := &citusSource{timeout: timeout}
	for _, w := range ws {
		cfg := w.Config.Copy()
		cfg.RuntimeParams["application_name"] = AppName
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		s.workers = append(s.workers, &citusWorkerConn{CitusWorker: CitusWorker{Name: w.Name, Config: cfg}, counts: newCounters(), total: map[string]float64{}})
	}
	return s
}

// sample reads every worker; a worker that cannot be reached is a note
// (once per distinct error) and is tried again next time.
func (s *citusSource) sample(ctx context.Context, now time.Time) []store.Sample {
	var out []store.Sample
	for _, w := range s.workers {
		qctx, cancel := context.WithTimeout(ctx, s.timeout)
		smp, ok, err := w.sample(qctx)
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
			smp.Time, smp.Source = now, "citus_workers"
			smp.Labels = map[string]string{"worker": w.Name}
			out = append(out, smp)
		}
	}
	return out
}

func (w *citusWorkerConn) sample(ctx context.Context) (store.Sample, bool, error) {
	if w.conn == nil || w.conn.IsClosed() {
		conn, err := pgx.ConnectConfig(ctx, w.Config)
		if err != nil {
			return store.Sample{}, false, err
		}
		w.conn = conn
	}
	var commit, rollback, rows, clients, internal, active, waiting, wal float64
	if err := w.conn.QueryRow(ctx, citusQuery).Scan(&commit, &rollback, &rows, &clients, &internal, &active, &waiting, &wal); err != nil {
		return store.Sample{}, false, err
	}
	p := "citus." + seriesWord(w.Name) + "."
	vals := map[string]float64{p + "connections.client": clients, p + "connections.citus_internal": internal, p + "active": active, p + "waiting": waiting}
	d, secs, ok := w.counts.update(time.Now(), map[string]float64{"xact_commit": commit, "xact_rollback": rollback, "rows_read": rows, "wal_bytes": wal})
	if ok {
		for k, v := range d {
			vals[p+k+"_per_s"] = v / secs
			w.total[k] += v
		}
	}
	return store.Sample{Values: vals}, true, nil
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
