// Package postgres keeps runs in a PostgreSQL results database: the output
// `--out postgres=DSN` writes a run as it goes, Publish uploads recorded
// runs (`pgarena publish`), and Results reads them back for the read
// commands (`--results postgres://...`), a store.Source printing the same as
// the runs' directories. Several machines may write to one database at
// once: a run is keyed by its host and id, and every write of a run is
// ordered by an advisory lock on that key. A run that fails after it was
// recorded is written failed with its error, as in its directory. The live
// output holds a session advisory lock on (1885823346, runs.id) while it
// writes, as a run directory's run.lock: readers call a run still marked
// running without that lock interrupted (its writer was killed, or its
// machine is gone: the server's keepalives notice within about a minute).
// A published snapshot of a running run therefore reads as interrupted.
//
// # Schema
//
// pgarena creates and migrates the schema pgarena_results (marked with a
// COMMENT; a schema of that name pgarena did not create is refused).
// Version 1:
//
//	schema_version(version)                 the schema's version, one row
//	runs(id, host, run_id, workload, label,  one row per run, unique (host, run_id);
//	     created, status, spec, server,      status running until the end (complete, degraded,
//	     summary, updated)                   stopped, failed), interrupted when the output closed
//	                                         before the end; spec, server, summary as their
//	                                         files in the run directory (jsonb)
//	intervals(run, seq, start_at, end_at,    data: the interval as a line of intervals.jsonl
//	          warmup, step, data)            (per type: counts, errors, latency stats, HDR
//	                                         histograms base64, V2 compressed)
//	samples(run, seq, at, source,           as samples.jsonl, seq in the order taken
//	        "values", labels, note)
//	findings(run, seq, severity, kind,       as findings.json
//	         message, data)
//
// Version 2 adds runs.histograms (histograms.hlog as recorded), samples.time
// (the sample's time as written, nanoseconds and offset; "at" is it to the
// microsecond), the total of each interval (committed, failed, p50/p95/p99
// ms: intervals.total) and an index for run id prefixes.
//
// Views for ad-hoc SQL (Grafana: examples/grafana/):
//
//	runs_overview       one row per run: run_id, host, label, workload, started,
//	                    duration_s, status, stop_reason, sqlstate (of a failed
//	                    run's error), tps, p50_ms, p95_ms, p99_ms, transactions,
//	                    failed, unfinished, clients, plan, cell
//	intervals_overview  one row per interval and transaction type, and one with
//	                    type 'total' (absent from intervals written by version 1):
//	                    run (runs.id), run_id, label, seq, t (end of the
//	                    interval), t_s (seconds since the run's first interval),
//	                    warmup, step, type, committed, tps, failed, p50_ms,
//	                    p95_ms, p99_ms
//	run_headlines, interval_tx   version 1's views, kept as they were
package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Schema is the schema pgarena creates.
const Schema = "pgarena_results"

// schemaMark is the schema's COMMENT: what pgarena created.
const schemaMark = "pgarena results database (created by pgarena; see internal/output/postgres)"

// migrations[i] brings the schema from version i to i+1.
var migrations = [...]string{
	`CREATE TABLE pgarena_results.schema_version (version int NOT NULL);
INSERT INTO pgarena_results.schema_version VALUES (0);
CREATE TABLE pgarena_results.runs (
	id bigserial PRIMARY KEY,
	host text NOT NULL,
	run_id text NOT NULL,
	workload text NOT NULL,
	label text NOT NULL DEFAULT '',
	created timestamptz NOT NULL,
	status text NOT NULL,
	spec jsonb NOT NULL,
	server jsonb,
	summary jsonb,
	updated timestamptz NOT NULL DEFAULT now(),
	UNIQUE (host, run_id));
CREATE TABLE pgarena_results.intervals (
	run bigint NOT NULL REFERENCES pgarena_results.runs ON DELETE CASCADE,
	seq int NOT NULL,
	start_at timestamptz NOT NULL,
	end_at timestamptz NOT NULL,
	warmup boolean NOT NULL,
	step int NOT NULL,
	data jsonb NOT NULL,
	PRIMARY KEY (run, seq));
CREATE TABLE pgarena_results.samples (
	run bigint NOT NULL REFERENCES pgarena_results.runs ON DELETE CASCADE,
	seq int NOT NULL,
	at timestamptz NOT NULL,
	source text NOT NULL,
	"values" jsonb,
	labels jsonb,
	note text,
	PRIMARY KEY (run, seq));
CREATE TABLE pgarena_results.findings (
	run bigint NOT NULL REFERENCES pgarena_results.runs ON DELETE CASCADE,
	seq int NOT NULL,
	severity text NOT NULL,
	kind text NOT NULL,
	message text NOT NULL,
	data jsonb NOT NULL,
	PRIMARY KEY (run, seq));
CREATE VIEW pgarena_results.run_headlines AS
SELECT r.id, r.host, r.run_id, r.workload, r.label, r.created, r.status,
	(r.summary->>'tps')::float8 AS tps,
	(r.summary->'latency_ms'->>'p99')::float8 AS p99_ms,
	(r.summary->>'transactions')::bigint AS transactions,
	(r.summary->>'failed')::bigint AS failed,
	(r.spec->>'clients')::int AS clients,
	r.spec->'plan'->>'plan' AS plan, r.spec->'plan'->>'cell_name' AS cell
FROM pgarena_results.runs r;
CREATE VIEW pgarena_results.interval_tx AS
SELECT i.run, r.run_id, r.label, i.seq, i.start_at, i.end_at, i.warmup, i.step,
	t->>'name' AS type,
	(t->>'count')::bigint AS committed,
	(t->>'count')::float8 / nullif(extract(epoch FROM i.end_at - i.start_at), 0) AS tps,
	coalesce((t->>'failed')::bigint, 0) AS failed,
	(t->'latency_ms'->>'p99')::float8 AS p99_ms
FROM pgarena_results.intervals i JOIN pgarena_results.runs r ON r.id = i.run,
	jsonb_array_elements(i.data->'tx') t;`,

	`ALTER TABLE pgarena_results.runs ADD COLUMN histograms text;
ALTER TABLE pgarena_results.samples ADD COLUMN "time" text;
ALTER TABLE pgarena_results.intervals ADD COLUMN total jsonb;
CREATE INDEX runs_run_id ON pgarena_results.runs (run_id text_pattern_ops);
CREATE VIEW pgarena_results.runs_overview AS
SELECT r.id, r.run_id, r.host, r.label, r.workload,
	coalesce((r.summary->>'start')::timestamptz, r.created) AS started,
	(r.summary->>'duration_s')::float8 AS duration_s,
	r.status,
	r.summary->>'stop_reason' AS stop_reason,
	substring(r.summary->>'stop_reason' FROM 'SQLSTATE ([0-9A-Z]{5})') AS sqlstate,
	(r.summary->>'tps')::float8 AS tps,
	(r.summary->'latency_ms'->>'p50')::float8 AS p50_ms,
	(r.summary->'latency_ms'->>'p95')::float8 AS p95_ms,
	(r.summary->'latency_ms'->>'p99')::float8 AS p99_ms,
	(r.summary->>'transactions')::bigint AS transactions,
	(r.summary->>'failed')::bigint AS failed,
	coalesce((r.summary->>'unfinished')::bigint, 0) AS unfinished,
	(r.spec->>'clients')::int AS clients,
	r.spec->>'plan' AS plan, r.spec->>'cell_name' AS cell
FROM pgarena_results.runs r;
CREATE VIEW pgarena_results.intervals_overview AS
WITH iv AS (
	SELECT i.*, r.run_id, r.label,
		extract(epoch FROM i.end_at - i.start_at) AS secs,
		extract(epoch FROM i.end_at - min(i.start_at) OVER (PARTITION BY i.run)) AS t_s
	FROM pgarena_results.intervals i JOIN pgarena_results.runs r ON r.id = i.run)
SELECT iv.run, iv.run_id, iv.label, iv.seq, iv.end_at AS t, iv.t_s, iv.warmup, iv.step,
	x.type, x.committed, x.committed / nullif(iv.secs, 0) AS tps, x.failed, x.p50_ms, x.p95_ms, x.p99_ms
FROM iv, LATERAL (
	SELECT t->>'name' AS type, (t->>'count')::bigint AS committed, coalesce((t->>'failed')::bigint, 0) AS failed,
		(t->'latency_ms'->>'p50')::float8 AS p50_ms, (t->'latency_ms'->>'p95')::float8 AS p95_ms,
		(t->'latency_ms'->>'p99')::float8 AS p99_ms
	FROM jsonb_array_elements(iv.data->'tx') t
	UNION ALL
	SELECT 'total', (iv.total->>'count')::bigint, (iv.total->>'failed')::bigint,
		(iv.total->>'p50_ms')::float8, (iv.total->>'p95_ms')::float8, (iv.total->>'p99_ms')::float8
	WHERE iv.total IS NOT NULL) x;`,
}

// Version is the schema version this pgarena writes.
const Version = len(migrations)

// Migrate creates the schema or brings it to Version, under an advisory
// lock so that machines starting at once do it once. A schema of that
// name pgarena did not create, or one newer than this pgarena, is an error.
func Migrate(ctx context.Context, conn *pgx.Conn) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('pgarena_results schema'))`); err != nil {
			return err
		}
		var mark *string
		err := tx.QueryRow(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, Schema).Scan(&mark)
		switch {
		case err == pgx.ErrNoRows:
			if _, err := tx.Exec(ctx, "CREATE SCHEMA "+Schema+"; COMMENT ON SCHEMA "+Schema+" IS '"+schemaMark+"'"); err != nil {
				return fmt.Errorf("create schema %s: %w", Schema, err)
			}
		case err != nil:
			return err
		case mark == nil || *mark != schemaMark:
			return fmt.Errorf("schema %s exists and was not created by pgarena: use another database", Schema)
		}
		v, exists := 0, false
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, Schema+".schema_version").Scan(&exists); err != nil {
			return err
		}
		if exists {
			if err := tx.QueryRow(ctx, `SELECT version FROM `+Schema+`.schema_version`).Scan(&v); err != nil {
				return err
			}
		}
		if v > len(migrations) {
			return fmt.Errorf("schema %s is at version %d, newer than this pgarena's %d: upgrade pgarena", Schema, v, len(migrations))
		}
		for i := v; i < len(migrations); i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrate %s to version %d: %w", Schema, i+1, err)
			}
			if _, err := tx.Exec(ctx, `UPDATE `+Schema+`.schema_version SET version = $1`, i+1); err != nil {
				return err
			}
		}
		return nil
	})
}
