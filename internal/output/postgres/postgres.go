package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
)

// Kind describes postgres to the registry (internal/output/all registers it).
var Kind = output.Kind{Name: "postgres", Usage: "postgres=DSN", ArgRequired: true,
	Help: "write the run as it goes into a PostgreSQL results database (schema " + Schema + ")",
	New:  New}

// writeTimeout bounds one record's writes: a database that hangs delays
// only this output, and not past the run's drain deadline for long.
const writeTimeout = 10 * time.Second

// Output writes one run into the results database.
type Output struct {
	conn    *pgx.Conn
	where   string // the database, redacted
	id      int64  // runs.id; 0 until Start
	samples int
}

// New connects to p.Arg (PG* variables from p.Env fill in what it leaves
// out) and creates or migrates the schema.
func New(p output.Params) (session.Output, error) {
	cfg, err := target.ParseDSN(p.Arg, p.Env)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg = cfg.Copy()
	for _, k := range writerKeepalives {
		cfg.RuntimeParams[k.name] = k.value
	}
	conn, err := target.Connect(ctx, cfg, "pgarena-results")
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", target.Redacted(cfg), err)
	}
	if err := Migrate(ctx, conn); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return &Output{conn: conn, where: target.Redacted(cfg)}, nil
}

func (o *Output) String() string { return "postgres=" + o.where }

// BorrowsRecords (a session.Borrower): Write inserts a record and keeps nothing of it.
func (o *Output) BorrowsRecords() {}

// Write writes a record; each is its own transaction.
func (o *Output) Write(r session.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	switch {
	case r.Start != nil:
		return o.start(ctx, r.Start)
	case o.id == 0:
		return nil // no run row: start failed (reported)
	case r.Interval != nil:
		_, err := o.conn.Exec(ctx, insertInterval, intervalArgs(o.id, r.Interval)...)
		return err
	case r.Samples != nil:
		b := &pgx.Batch{}
		for _, s := range r.Samples {
			b.Queue(insertSample, sampleArgs(o.id, o.samples, s)...)
			o.samples++
		}
		return o.conn.SendBatch(ctx, b).Close()
	case r.End != nil:
		var hlog []byte
		if r.End.Histograms != nil {
			hlog, _ = store.EncodeHistogramLog(r.End.Histograms) // as Writer.Finish: a run without is still recorded
		}
		return pgx.BeginFunc(ctx, o.conn, func(tx pgx.Tx) error {
			if err := writeEnd(ctx, tx, o.id, &r.End.Summary, hlog); err != nil {
				return err
			}
			return writeFindings(ctx, tx, o.id, r.End.Findings)
		})
	}
	return nil
}

// writerKeepalives make the server notice a writer whose machine is gone
// within about a minute (a killed process closes its socket at once), so
// that its run lock is released and readers call the run interrupted.
var writerKeepalives = [...]struct{ name, value string }{{"tcp_keepalives_idle", "30"}, {"tcp_keepalives_interval", "10"}, {"tcp_keepalives_count", "3"}}

// runLockSpace is the first key of a run's lock (pg_advisory_lock(int,
// int)); the second is runs.id. The live output holds it while it writes
// the run, as the run's directory has its run.lock: a reader that finds a
// run "running" without it knows the writer is gone (interrupted).
const runLockSpace = "1885823346" // "pgar"

// runLockHeld is SQL true when the writer of run r (a row of runs) holds
// the run's lock.
const runLockHeld = `EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND l.classid = ` + runLockSpace + ` AND l.objid = (r.id % 2147483648)::oid AND l.objsubid = 2)`

func (o *Output) start(ctx context.Context, s *session.RunStart) error {
	return pgx.BeginFunc(ctx, o.conn, func(tx pgx.Tx) error {
		spec := s.Spec
		spec.ID = s.ID
		var srv *store.ServerInfo
		if s.Server.Version != "" { // else it failed before the server was described
			srv = &s.Server
		}
		id, err := upsertRun(ctx, tx, &spec, srv, metrics.StatusRunning)
		if err != nil {
			return err
		}
		o.id = id
		// held by the session (not the transaction) until Close
		_, err = tx.Exec(ctx, `SELECT pg_advisory_lock(`+runLockSpace+`, ($1 % 2147483648)::int)`, id)
		return err
	})
}

// Close marks a run that got no End as interrupted, then disconnects.
func (o *Output) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	var err error
	if o.id != 0 {
		_, err = o.conn.Exec(ctx, `UPDATE `+Schema+`.runs SET status = $2, updated = now() WHERE id = $1 AND status = $3`,
			o.id, metrics.StatusInterrupted, metrics.StatusRunning)
	}
	return errors.Join(err, o.conn.Close(ctx))
}

const (
	insertInterval = `INSERT INTO ` + Schema + `.intervals (run, seq, start_at, end_at, warmup, step, data, total)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run, seq) DO NOTHING`
	insertSample = `INSERT INTO ` + Schema + `.samples (run, seq, at, source, "values", labels, note, "time")
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run, seq) DO NOTHING`
)

// Columns of the rows intervalArgs and sampleArgs make.
var (
	intervalColumns = []string{"run", "seq", "start_at", "end_at", "warmup", "step", "data", "total"}
	sampleColumns   = []string{"run", "seq", "at", "source", "values", "labels", "note", "time"}
)

// intervalTotal is intervals.total: the interval's figures over every
// transaction type, for SQL (the data's histograms hold them exactly).
type intervalTotal struct {
	Count  int64   `json:"count"`
	Failed int64   `json:"failed"`
	P50    float64 `json:"p50_ms"`
	P95    float64 `json:"p95_ms"`
	P99    float64 `json:"p99_ms"`
}

func intervalArgs(run int64, iv *metrics.Interval) []any {
	data, err := json.Marshal(iv)
	if err != nil {
		data = []byte("null")
	}
	t := iv.Total()
	st := t.LatencyStats()
	total := intervalTotal{Count: t.Count, Failed: t.Failed(), P50: st.P50, P95: st.P95, P99: st.P99}
	return []any{run, iv.Seq, iv.Start, iv.End, iv.Warmup, iv.Step, string(data), total}
}

func sampleArgs(run int64, seq int, s store.Sample) []any {
	var vals, labels any
	if s.Values != nil {
		vals = s.Values
	}
	if s.Labels != nil {
		labels = s.Labels
	}
	var note any
	if s.Note != "" {
		note = s.Note
	}
	return []any{run, seq, s.Time, s.Source, vals, labels, note, s.Time.Format(time.RFC3339Nano)}
}

// upsertRun inserts the run's row, or updates its spec and server, and
// returns its id. The run's key is locked for the transaction.
func upsertRun(ctx context.Context, tx pgx.Tx, spec *store.RunSpec, server *store.ServerInfo, status string) (int64, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, spec.Host.Hostname+"/"+spec.ID); err != nil {
		return 0, err
	}
	var srv any
	if server != nil {
		srv = server
	}
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO `+Schema+`.runs (host, run_id, workload, label, created, status, spec, server)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (host, run_id) DO UPDATE SET spec = excluded.spec, server = excluded.server, updated = now()
RETURNING id`, spec.Host.Hostname, spec.ID, spec.Workload, spec.Label, spec.Created, status, spec, srv).Scan(&id)
	return id, err
}

// writeEnd records the run's outcome: status, summary and histograms.hlog
// (nil: none).
func writeEnd(ctx context.Context, tx pgx.Tx, run int64, sum *metrics.Summary, hlog []byte) error {
	var h any
	if hlog != nil {
		h = string(hlog)
	}
	_, err := tx.Exec(ctx, `UPDATE `+Schema+`.runs SET status = $2, summary = $3, histograms = $4, updated = now() WHERE id = $1`,
		run, sum.Status, sum, h)
	return err
}

func writeFindings(ctx context.Context, tx pgx.Tx, run int64, fs []store.Finding) error {
	for i, f := range fs {
		if _, err := tx.Exec(ctx, `INSERT INTO `+Schema+`.findings (run, seq, severity, kind, message, data)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run, seq) DO NOTHING`, run, i, f.Severity, f.Kind, f.Message, f); err != nil {
			return err
		}
	}
	return nil
}
