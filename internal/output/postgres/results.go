package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
)

// IsURL reports whether a --results value names a results database (a
// postgres:// or postgresql:// URL) rather than a directory.
func IsURL(v string) bool {
	return strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://")
}

// readTimeout bounds one read of the results database.
const readTimeout = 2 * time.Minute

// Results reads runs back from a results database: a store.Source, so that
// list, show, compare, report, export, plan and serve print the same from it
// as from a directory. Runs are named by their run id; a run id published
// from two hosts is refused as ambiguous. Its methods may be called from
// any goroutine (serve): they take turns on one connection.
type Results struct {
	mu    sync.Mutex
	conn  *pgx.Conn
	where string // the database, redacted
	empty bool   // no schema yet: no runs
}

// OpenResults connects to the results database dsn (PG* variables from env
// fill in what it leaves out). A database without the schema has no runs;
// a schema of an older version is migrated first, one of a newer pgarena
// is refused.
func OpenResults(ctx context.Context, dsn string, env func(string) string) (*Results, error) {
	cfg, err := target.ParseDSN(dsn, env)
	if err != nil {
		return nil, err
	}
	r := &Results{where: target.Redacted(cfg)}
	if r.conn, err = target.Connect(ctx, cfg, "pgarena-results"); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", r.where, err)
	}
	var exists bool
	if err := r.conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, Schema+".schema_version").Scan(&exists); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", r.where, err)
	}
	if !exists {
		r.empty = true
		return r, nil
	}
	if err := Migrate(ctx, r.conn); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", r.where, err)
	}
	return r, nil
}

// Close disconnects.
func (r *Results) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return r.conn.Close(ctx)
}

// Where names the database, its password left out.
func (r *Results) Where() string { return r.where }

// query runs f on the connection, one caller at a time, within readTimeout.
func (r *Results) query(f func(ctx context.Context, c *pgx.Conn) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	if err := f(ctx, r.conn); err != nil {
		return fmt.Errorf("%s: %w", r.where, err)
	}
	return nil
}

// liveStatus is a run's status as readers see it: a run still marked
// running whose writer no longer holds its lock was interrupted (its
// process or machine died), as a run directory whose lock is free.
const liveStatus = `CASE WHEN r.status = 'running' AND NOT ` + runLockHeld + ` THEN 'interrupted' ELSE r.status END`

// listQuery selects what a List line needs of each run: the parts of its
// spec and summary that store.ListInfo decodes, not the whole documents.
const listQuery = `SELECT r.id, r.run_id, ` + liveStatus + `,
	jsonb_build_object('created', spec->'created', 'label', spec->'label', 'workload', spec->'workload',
		'clients', spec->'clients', 'target', spec->'target', 'plan', spec->'plan', 'cell', spec->'cell',
		'cell_name', spec->'cell_name', 'repeat', spec->'repeat')::text,
	CASE WHEN summary IS NOT NULL THEN jsonb_build_object('end', summary->'end', 'status', summary->'status',
		'tps', summary->'tps', 'failed', summary->'failed', 'latency_ms', jsonb_build_object('p95', summary->'latency_ms'->'p95'),
		'figures', coalesce((SELECT jsonb_agg(f) FROM jsonb_array_elements(summary->'figures') f
			WHERE f->>'name' = 'nopm' AND coalesce(f->>'tx', '') = ''), '[]'))::text END
FROM ` + Schema + `.runs r`

// List returns every run, newest first, as store.Store.List does; a run
// without a summary is as its status says (running, or interrupted: its
// figures from its intervals).
func (r *Results) List() ([]store.RunInfo, error) {
	if r.empty {
		return nil, nil
	}
	type row struct {
		key        int64
		id, status string
		spec       string
		summary    *string
	}
	var rows []row
	err := r.query(func(ctx context.Context, c *pgx.Conn) error {
		rs, err := c.Query(ctx, listQuery)
		if err != nil {
			return err
		}
		var w row
		_, err = pgx.ForEachRow(rs, []any{&w.key, &w.id, &w.status, &w.spec, &w.summary}, func() error {
			rows = append(rows, w)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	infos := make([]store.RunInfo, len(rows))
	for i, w := range rows {
		var sum []byte
		if w.summary != nil {
			sum = []byte(*w.summary)
		}
		infos[i] = store.ListInfo(w.id, "", []byte(w.spec), sum, w.status, func() ([]metrics.Interval, error) {
			return r.intervals(w.key)
		})
	}
	store.SortNewestFirst(infos)
	return infos, nil
}

// Resolve returns the id of the run ref names, as store.Store.Resolve does.
func (r *Results) Resolve(ref string) (string, error) {
	return store.ResolveAmong(ref, r.where, r.List, func(prefix string) ([]string, error) {
		if r.empty {
			return nil, nil
		}
		var ids []string
		err := r.query(func(ctx context.Context, c *pgx.Conn) error {
			rs, err := c.Query(ctx, `SELECT DISTINCT run_id FROM `+Schema+`.runs WHERE run_id LIKE $1 ESCAPE '\'`, likePrefix(prefix))
			if err != nil {
				return err
			}
			ids, err = pgx.CollectRows(rs, pgx.RowTo[string])
			return err
		})
		return ids, err
	})
}

// likePrefix is a LIKE pattern matching strings that start with p.
func likePrefix(p string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(p) + "%"
}

// Signature changes whenever run id's record changes: its status, its
// last interval or sample.
func (r *Results) Signature(id string) (string, error) {
	var sig string
	err := r.query(func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, `SELECT string_agg(concat_ws(':', r.id, `+liveStatus+`, r.updated,
			(SELECT max(seq) FROM `+Schema+`.intervals WHERE run = r.id), (SELECT max(seq) FROM `+Schema+`.samples WHERE run = r.id)), ';')
			FROM `+Schema+`.runs r WHERE r.run_id = $1`, id).Scan(&sig)
	})
	return sig, err
}

// Load reads the run ref names: spec, server, intervals, samples, findings,
// summary and histograms, as store.Store.Load does from a directory.
func (r *Results) Load(ref string) (*store.Run, error) {
	id, err := r.Resolve(ref)
	if err != nil {
		return nil, err
	}
	var (
		key               int64
		hosts             []string
		status, spec      string
		server, sum, hlog *string
	)
	err = r.query(func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, `SELECT id, array_agg(host) OVER (), `+liveStatus+`, spec::text, server::text, summary::text, histograms
			FROM `+Schema+`.runs r WHERE run_id = $1 LIMIT 1`, id).Scan(&key, &hosts, &status, &spec, &server, &sum, &hlog)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, store.NoRunError(ref, r.where) // deleted since Resolve
	case err != nil:
		return nil, err
	case len(hosts) > 1:
		return nil, fmt.Errorf("run %s was published from %d hosts (%s) in %s: rename one", id, len(hosts), strings.Join(hosts, ", "), r.where)
	}
	run := &store.Run{ID: id, Status: status}
	if err := json.Unmarshal([]byte(spec), &run.Spec); err != nil {
		return nil, fmt.Errorf("load run %s: spec: %w", id, err)
	}
	if server != nil {
		run.Server = &store.ServerInfo{}
		if err := json.Unmarshal([]byte(*server), run.Server); err != nil {
			return nil, fmt.Errorf("load run %s: server: %w", id, err)
		}
	}
	if hlog != nil {
		run.HistogramLog = []byte(*hlog)
	}
	if run.Intervals, err = r.intervals(key); err != nil {
		return nil, fmt.Errorf("load run %s: %w", id, err)
	}
	if run.Samples, err = r.samples(key); err != nil {
		return nil, fmt.Errorf("load run %s: %w", id, err)
	}
	if run.Findings, err = r.findings(key); err != nil {
		return nil, fmt.Errorf("load run %s: %w", id, err)
	}
	if sum == nil {
		run.Complete(nil)
		return run, nil
	}
	var s metrics.Summary
	if err := json.Unmarshal([]byte(*sum), &s); err != nil {
		return nil, fmt.Errorf("load run %s: summary: %w", id, err)
	}
	run.Complete(&s)
	return run, nil
}

// intervals reads the intervals of runs.id key in order.
func (r *Results) intervals(key int64) ([]metrics.Interval, error) {
	var ivs []metrics.Interval
	err := r.query(func(ctx context.Context, c *pgx.Conn) error {
		rs, err := c.Query(ctx, `SELECT data::text FROM `+Schema+`.intervals WHERE run = $1 ORDER BY seq`, key)
		if err != nil {
			return err
		}
		var data string
		_, err = pgx.ForEachRow(rs, []any{&data}, func() error {
			var iv metrics.Interval
			if err := json.Unmarshal([]byte(data), &iv); err != nil {
				return fmt.Errorf("interval: %w", err)
			}
			ivs = append(ivs, iv)
			return nil
		})
		return err
	})
	return ivs, err
}

// samples reads the samples of runs.id key in the order they were taken;
// their times as written (version 1 kept them to the microsecond).
func (r *Results) samples(key int64) ([]store.Sample, error) {
	var ss []store.Sample
	err := r.query(func(ctx context.Context, c *pgx.Conn) error {
		rs, err := c.Query(ctx, `SELECT at, "time", source, "values"::text, labels::text, note FROM `+Schema+`.samples WHERE run = $1 ORDER BY seq`, key)
		if err != nil {
			return err
		}
		var (
			at                         time.Time
			source                     string
			written, vals, label, note *string
		)
		_, err = pgx.ForEachRow(rs, []any{&at, &written, &source, &vals, &label, &note}, func() error {
			smp := store.Sample{Time: at, Source: source}
			if written != nil {
				if err := smp.Time.UnmarshalText([]byte(*written)); err != nil {
					return fmt.Errorf("sample time: %w", err)
				}
			}
			if vals != nil {
				if err := json.Unmarshal([]byte(*vals), &smp.Values); err != nil {
					return fmt.Errorf("sample values: %w", err)
				}
			}
			if label != nil {
				if err := json.Unmarshal([]byte(*label), &smp.Labels); err != nil {
					return fmt.Errorf("sample labels: %w", err)
				}
			}
			if note != nil {
				smp.Note = *note
			}
			ss = append(ss, smp)
			return nil
		})
		return err
	})
	return ss, err
}

// findings reads the findings of runs.id key in order.
func (r *Results) findings(key int64) ([]store.Finding, error) {
	var fs []store.Finding
	err := r.query(func(ctx context.Context, c *pgx.Conn) error {
		rs, err := c.Query(ctx, `SELECT data::text FROM `+Schema+`.findings WHERE run = $1 ORDER BY seq`, key)
		if err != nil {
			return err
		}
		var data string
		_, err = pgx.ForEachRow(rs, []any{&data}, func() error {
			var f store.Finding
			if err := json.Unmarshal([]byte(data), &f); err != nil {
				return fmt.Errorf("finding: %w", err)
			}
			fs = append(fs, f)
			return nil
		})
		return err
	})
	return fs, err
}
