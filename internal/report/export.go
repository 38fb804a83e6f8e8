package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/store"
)

// CSVColumns is the header of the CSV export, one row per run, or one per
// step of a sweep (step 1, 2, ...; empty for a run that is not a sweep,
// whose clients, counts, rates and latencies are then the step's own). The
// order is stable: columns are only ever appended. target_rate is the mean
// open-loop rate asked for (empty in a closed loop). Latencies are milliseconds
// (end − intended start); err_* count failed transactions by class; params
// is the workload's parameters as sorted key=value pairs joined by ';'.
var CSVColumns = []string{
	"run_id", "created", "status", "label", "workload", "scale", "params", "query_mode",
	"clients", "threads", "duration_s", "warmup_s",
	"transactions", "failed", "retries", "tps",
	"lat_avg_ms", "lat_stddev_ms", "lat_p50_ms", "lat_p90_ms", "lat_p95_ms", "lat_p99_ms", "lat_p999_ms", "lat_max_ms",
	"service_avg_ms", "service_p99_ms", "initial_connect_ms", "reconnects",
	"err_connect_refused", "err_dns", "err_auth", "err_too_many_connections", "err_connection_lost",
	"err_admin_shutdown", "err_deadlock", "err_serialization", "err_timeout", "err_read_only",
	"err_constraint", "err_other",
	"server_version", "target", "client_host", "client_cores", "pgarena_version", "seed",
	// Error classes added after err_other.
	"err_tls", "err_starting", "err_prepared_statements",
	"step", "target_rate",
	// the workload's figures of merit (TPC-C's NOPM and TPM); empty when the
	// workload has none
	"nopm", "tpm",
	// replicas (--replica, --replica-dsn): the slowest replica's catch-up,
	// transactions / (duration_s + catch_up_s) and its ratio to tps, and the
	// heartbeat lag over the measured time; empty without replicas
	"catch_up_s", "sustainable_tps", "sustainable_ratio", "replica_lag_max_s", "replica_lag_p99_s",
	// whether every replica caught up (false: catch_up_s is a lower bound
	// and sustainable_tps an upper bound, sustainable_upper_bound true),
	// and the longest time a replica could not be read
	"caught_up", "sustainable_upper_bound", "replica_unreadable_s",
	// a failover during the run (--failover): the standby's sync state,
	// fault to first commit on the new primary, fault to promotion, the
	// workload's failures during the downtime, the ledger's acknowledged
	// commits, those the new primary lacks, and those never answered
	"failover_replication", "failover_downtime_s", "failover_promoted_s",
	"failover_failed_during", "failover_ledger_acked", "failover_acked_lost", "failover_in_doubt",
	// transactions still running when the measured time ended and what
	// became of them in the drain after it (named as in the summary's
	// JSON: unfinished and drain's fields); the drain's are empty when
	// nothing was unfinished
	"unfinished", "drain_s", "committed_in_drain", "failed_in_drain", "cancelled",
}

// WriteCSV writes runs as CSV with the CSVColumns header.
func WriteCSV(w io.Writer, runs []*store.Run) error {
	cw := newSafeCSV(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	for _, r := range runs {
		if len(r.Summary.Steps) == 0 {
			if err := cw.Write(csvRow(r, &r.Summary, r.Spec.Clients, "")); err != nil {
				return err
			}
			continue
		}
		for _, st := range r.Summary.Steps {
			ss := StepAsSummary(&r.Summary, &st)
			if err := cw.Write(csvRow(r, &ss, st.Clients, strconv.Itoa(st.Step))); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// csvRow is the row of run r with the numbers of s (the run's summary, or
// one step's) and the step's number (empty when not a sweep).
func csvRow(r *store.Run, s *metrics.Summary, clients int, step string) []string {
	l := s.Latency
	server := ""
	if r.Server != nil {
		server = r.Server.Version
	}
	row := []string{
		r.ID, r.Spec.Created.UTC().Format(time.RFC3339), r.Status, r.Spec.Label, r.Spec.Workload,
		r.Spec.Params["scale"], paramString(r.Spec.Params), r.Spec.QueryMode,
		strconv.Itoa(clients), strconv.Itoa(r.Spec.Threads), ftoa(s.DurationS), ftoa(s.WarmupS),
		strconv.FormatInt(s.Transactions, 10), strconv.FormatInt(s.Failed, 10), strconv.FormatInt(s.Retries, 10), ftoa(s.TPS),
		ftoa(l.Avg), ftoa(l.Stddev), ftoa(l.P50), ftoa(l.P90), ftoa(l.P95), ftoa(l.P99), ftoa(l.P999), ftoa(l.Max),
		ftoa(s.Service.Avg), ftoa(s.Service.P99), ftoa(s.InitialConnectMS), strconv.FormatInt(s.Reconnects, 10),
	}
	for c := 1; c <= int(pgerr.ClassOther); c++ {
		row = append(row, strconv.FormatInt(s.Errors[c], 10))
	}
	row = append(row, server, r.Spec.Target, r.Spec.Host.Hostname, strconv.Itoa(r.Spec.Host.Cores),
		r.Spec.PgarenaVersion, strconv.FormatInt(r.Spec.Seed, 10))
	for c := pgerr.ClassOther + 1; c < pgerr.ErrorClass(pgerr.NumClasses); c++ {
		row = append(row, strconv.FormatInt(s.Errors[c], 10))
	}
	target := ""
	if s.TargetRate > 0 {
		target = ftoa(s.TargetRate)
	}
	row = append(row, step, target)
	row = append(row, figureCell(s, "nopm"), figureCell(s, "tpm"))
	repl, replAdded := replicationCells(s.Replication)
	row = append(row, repl...)
	row = append(row, replAdded...)
	row = append(row, failoverCells(s.Failover)...)
	return append(row, drainCells(s.Unfinished, s.Drain)...)
}

// drainCells are the unfinished and drain columns of a run or step.
func drainCells(unfinished int64, d *metrics.DrainSummary) []string {
	if d == nil {
		return []string{strconv.FormatInt(unfinished, 10), "", "", "", ""}
	}
	return []string{strconv.FormatInt(unfinished, 10), ftoa(d.DrainS), strconv.FormatInt(d.Committed, 10),
		strconv.FormatInt(d.Failed, 10), strconv.FormatInt(d.Cancelled, 10)}
}

// figureCell is the run-wide figure named name of s, "" if it has none.
func figureCell(s *metrics.Summary, name string) string {
	for _, f := range s.Figures {
		if f.Name == name && f.Tx == "" {
			return ftoa(f.Value)
		}
	}
	return ""
}

// StepAsSummary is one step of the sweep run as a Summary of its own: the
// run's metadata with the step's clients, times, counts, rates, latencies
// and status.
func StepAsSummary(run *metrics.Summary, st *metrics.StepSummary) metrics.Summary {
	s := metrics.Summary{RunID: run.RunID, Status: st.Status, StopReason: st.StopReason, Workload: run.Workload,
		Label: run.Label, QueryMode: run.QueryMode, Clients: st.Clients, Threads: run.Threads, Params: run.Params,
		Start: st.Start, End: st.End, DurationS: st.DurationS, WarmupS: st.WarmupS,
		Transactions: st.Transactions, Failed: st.Failed, Errors: st.Errors, Retries: st.Retries, TPS: st.TPS,
		Latency: st.Latency, Service: st.Service, InitialConnectMS: run.InitialConnectMS, Tx: st.Tx,
		TargetRate: st.TargetRate, Replication: st.Replication, Unfinished: st.Unfinished, Drain: st.Drain}
	if s.TargetRate == 0 {
		s.TargetRate = st.Rate
	}
	return s
}

// paramString renders parameters as sorted key=value pairs joined by ';'.
func paramString(p map[string]string) string {
	keys := slices.Sorted(maps.Keys(p))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + p[k]
	}
	return strings.Join(parts, ";")
}

// RunExport is everything about one run, as exported to JSON: the spec, the
// server, the summary, every interval (each with its histograms) and the
// run's full latency histogram per transaction type, as base64 compressed
// HdrHistogram V2 ("HISTFAA..."), readable by any HDR implementation.
type RunExport struct {
	ID         string             `json:"id"`
	Status     string             `json:"status"`
	Truncated  bool               `json:"truncated,omitempty"`
	Spec       store.RunSpec      `json:"spec"`
	Server     *store.ServerInfo  `json:"server,omitempty"`
	Summary    metrics.Summary    `json:"summary"`
	Histograms map[string]string  `json:"histograms"`
	Intervals  []metrics.Interval `json:"intervals"`
	// Samples are the server and host samples, each named by its source
	// (pg_stat_database, activity, host_cpu, host_disk, …); Findings the
	// samplers' end-of-run findings.
	Samples  []store.Sample  `json:"samples,omitempty"`
	Findings []store.Finding `json:"findings,omitempty"`
}

// NewRunExport gathers r for export; hists are the run's full latency
// histograms by transaction type (store.Run.Histograms).
func NewRunExport(r *store.Run, hists map[string]*hdr.Histogram) (*RunExport, error) {
	e := &RunExport{ID: r.ID, Status: r.Status, Truncated: r.Truncated, Spec: r.Spec, Server: r.Server,
		Summary: r.Summary, Histograms: make(map[string]string, len(hists)), Intervals: r.Intervals,
		Samples: r.Samples, Findings: r.Findings}
	if e.Intervals == nil {
		e.Intervals = []metrics.Interval{}
	}
	for name, h := range hists {
		enc, err := metrics.EncodeHistogram(h)
		if err != nil {
			return nil, fmt.Errorf("run %s: histogram %s: %w", r.ID, name, err)
		}
		e.Histograms[name] = enc
	}
	return e, nil
}

// WriteJSON writes e as indented JSON followed by a newline.
func (e *RunExport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(e)
}
