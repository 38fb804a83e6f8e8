package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/store"
)

// Publish uploads a recorded run in one transaction and reports whether it
// wrote anything. A run already there with the same status, summary and
// histograms is left alone, so publishing twice changes nothing; a run there
// in another state (written live and interrupted, still running then, or
// published by schema version 1) is replaced by the recorded one.
func Publish(ctx context.Context, conn *pgx.Conn, run *store.Run) (bool, error) {
	spec := run.Spec
	spec.ID = run.ID
	final := run.Summary
	final.Status = run.Status
	sum, err := json.Marshal(&final)
	if err != nil {
		return false, err
	}
	hlog, err := run.HistogramLogBytes()
	if err != nil {
		return false, fmt.Errorf("run %s: %w", run.ID, err)
	}
	wrote := false
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, spec.Host.Hostname+"/"+spec.ID); err != nil {
			return err
		}
		var same bool
		var h any
		if hlog != nil {
			h = string(hlog)
		}
		// histograms too: a run published by version 1 is published again whole
		err := tx.QueryRow(ctx, `SELECT coalesce(status = $3 AND summary = $4::jsonb AND histograms IS NOT DISTINCT FROM $5, false) FROM `+Schema+`.runs WHERE host = $1 AND run_id = $2`,
			spec.Host.Hostname, spec.ID, run.Status, string(sum), h).Scan(&same)
		switch {
		case err == nil && same:
			return nil
		case err == nil:
			if _, err := tx.Exec(ctx, `DELETE FROM `+Schema+`.runs WHERE host = $1 AND run_id = $2`, spec.Host.Hostname, spec.ID); err != nil {
				return err
			}
		case err != pgx.ErrNoRows:
			return err
		}
		id, err := upsertRun(ctx, tx, &spec, run.Server, run.Status)
		if err != nil {
			return err
		}
		ivRows := make([][]any, len(run.Intervals))
		for i := range run.Intervals {
			ivRows[i] = intervalArgs(id, &run.Intervals[i])
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{Schema, "intervals"}, intervalColumns, pgx.CopyFromRows(ivRows)); err != nil {
			return err
		}
		smRows := make([][]any, len(run.Samples))
		for i, s := range run.Samples {
			smRows[i] = sampleArgs(id, i, s)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{Schema, "samples"}, sampleColumns, pgx.CopyFromRows(smRows)); err != nil {
			return err
		}
		if run.Status != metrics.StatusRunning {
			if err := writeEnd(ctx, tx, id, &final, hlog); err != nil {
				return err
			}
		}
		wrote = true
		return writeFindings(ctx, tx, id, run.Findings)
	})
	return wrote, err
}
