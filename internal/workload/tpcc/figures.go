package tpcc

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// Snapshot implements workload.FigureReporter: the counters HammerDB reads
// for its figures — sum(d_next_o_id) over all districts (every committed
// new-order advances it by one; a rolled-back one does not) and
// xact_commit + xact_rollback of every database, as HammerDB sums them
// (kept per database, so that one dropped during the run cannot make the
// sum's delta negative), and the current database's alone.
func (w *Workload) Snapshot(ctx context.Context, conn pgtext.Querier) (map[string]float64, error) {
	var nextOID, xacts float64
	err := conn.QueryRow(ctx, `select
		(select coalesce(sum(d_next_o_id), 0)::float8 from district),
		(select (xact_commit + xact_rollback)::float8 from pg_stat_database where datname = current_database())`).
		Scan(&nextOID, &xacts)
	if err != nil {
		return nil, fmt.Errorf("tpcc snapshot: %w", err)
	}
	snap := map[string]float64{"d_next_o_id": nextOID, "xacts": xacts, "rollbacks": float64(w.Rollbacks())}
	rows, err := conn.Query(ctx, `select datid, (xact_commit + xact_rollback)::float8 from pg_stat_database`)
	if err != nil {
		return nil, fmt.Errorf("tpcc snapshot: %w", err)
	}
	for rows.Next() {
		var oid uint32
		var n float64
		if err := rows.Scan(&oid, &n); err != nil {
			return nil, fmt.Errorf("tpcc snapshot: %w", err)
		}
		snap[xactsOf+strconv.FormatUint(uint64(oid), 10)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tpcc snapshot: %w", err)
	}
	return snap, nil
}

// xactsOf prefixes a database's commits + rollbacks in a snapshot.
const xactsOf = "xacts_db:"

// allDatabases is HammerDB's count between two snapshots: the growth of
// xact_commit + xact_rollback summed over the databases of the second (a
// database created in between counts from 0; one dropped in between is
// lost, as it is to HammerDB, but never subtracts).
func allDatabases(before, after map[string]float64) float64 {
	sum := 0.0
	for k, v := range after {
		if strings.HasPrefix(k, xactsOf) {
			sum += max(v-before[k], 0)
		}
	}
	return sum
}

// Figures implements workload.FigureReporter with HammerDB's definitions:
// NOPM, new orders committed per minute, counted by the database
// (d_next_o_id) and cross-checked with the clients' count (committed
// new-orders less the 1% rolled back, clause 2.4.1.4); TPM, the server's
// transactions (commits + rollbacks) per minute summed over all databases
// as HammerDB counts it — so it includes other databases' work and
// pgarena's own sampler — with the benchmark database's own beside it.
func (w *Workload) Figures(win workload.FigureWindow) []workload.Figure {
	before, after, elapsed, committed := win.Before, win.After, win.Elapsed, win.Committed
	mins := elapsed.Minutes()
	if mins <= 0 {
		return nil
	}
	dbNOPM := (after["d_next_o_id"] - before["d_next_o_id"]) / mins
	clientNew := float64(committed[txNames[txNewOrder]]) - (after["rollbacks"] - before["rollbacks"])
	clientNOPM := clientNew / mins
	nopm := workload.Figure{Name: "nopm", Value: math.Round(dbNOPM), Unit: "new orders/min",
		Note: "from the database: sum(d_next_o_id) delta", CrossCheck: "nopm_clients"}
	if w.segments > 1 {
		// The database counts every segment's new orders, the clients
		// this segment's: pgarena merge compares the merged figures.
		nopm.Note += " (every segment's new orders)"
	} else if clientNOPM > 0 && math.Abs(dbNOPM-clientNOPM)/clientNOPM > 0.01 {
		nopm.Note = fmt.Sprintf("database %.0f vs clients %.0f: they differ by more than 1%% (other writers, or warm-up counted by one side only)",
			dbNOPM, clientNOPM)
	}
	figs := []workload.Figure{
		nopm,
		{Name: "nopm_clients", Value: math.Round(clientNOPM), Unit: "new orders/min", Note: "counted by pgarena's clients, rollbacks excluded"},
		{Name: "tpm", Value: math.Round(allDatabases(before, after) / mins), Unit: "transactions/min",
			Note: "HammerDB's TPM: xact_commit + xact_rollback delta summed over all databases (pg_stat_database)"},
		{Name: "tpm_database", Value: math.Round((after["xacts"] - before["xacts"]) / mins), Unit: "transactions/min",
			Note: "the same for the benchmark database alone"},
	}
	figs = append(figs, workload.Figure{Name: "rollbacks", Tx: txNames[txNewOrder],
		Value: after["rollbacks"] - before["rollbacks"], Unit: "new orders",
		Note: "rolled back by the 1% rule of clause 2.4.1.4, counted as completed"})
	if w.warehouses > 0 {
		// tpmC efficiency: the share of the maximum 12.86 tpmC per warehouse
		// (clause 4.2: 10 terminals at the minimum keying and think times).
		eff := 100 * dbNOPM / (12.86 * float64(w.warehouses))
		note := "NOPM / (12.86 × warehouses)"
		if !w.keyingThinking {
			note += "; above 100% without --keying-thinking, whose pacing the 12.86 assumes"
		}
		figs = append(figs, workload.Figure{Name: "efficiency", Value: math.Round(eff*10) / 10, Unit: "%", Note: note})
	}
	return figs
}

// SetSegment implements workload.Segmenter: the run is split over count
// processes, so the database's counts are the whole run's, the clients'
// this segment's (Figures does not compare them).
func (w *Workload) SetSegment(index, count int) { w.segments = count }

// ProgressFigure implements workload.ProgressFigurer: NOPM over a span of
// the run as the clients count it (new-orders committed, less those rolled
// back since the previous call). The database's count is read only at the
// start and the end of the run.
func (w *Workload) ProgressFigure(committed map[string]int64, span time.Duration) workload.Figure {
	rb := w.rollbacks.Load()
	newOrders := committed[txNames[txNewOrder]] - (rb - w.progressRollbacks)
	w.progressRollbacks = rb
	f := workload.Figure{Name: "nopm", Unit: "new orders/min"}
	if span > 0 {
		f.Value = math.Round(float64(max(newOrders, 0)) / span.Minutes())
	}
	return f
}
