package store

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pgarena/pgarena/internal/metrics"
)

// Source is where recorded runs are read from: a results directory (*Store)
// or a results database (internal/output/postgres.Results). The read
// commands (list, show, compare, report, export, plan, serve) take a Source
// and print the same from either.
type Source interface {
	// List returns every run, newest first (by Created, then id).
	List() ([]RunInfo, error)
	// Resolve returns the id of the run ref names: an id, an unambiguous
	// id prefix, "last" or "last~N".
	Resolve(ref string) (string, error)
	// Load reads the run ref names, everything the readers use.
	Load(ref string) (*Run, error)
	// Signature changes whenever the record of run id changes (a live run
	// grows by an interval per tick): readers cache runs by it.
	Signature(id string) (string, error)
	// Where names the source in messages: the directory, or the database
	// with its password redacted.
	Where() string
}

// Where returns the results directory.
func (s *Store) Where() string { return s.dir }

// Signature names the size and modification time of every file in the run
// directory of id: it changes whenever the run's writer adds anything,
// whatever the files are called.
func (s *Store) Signature(id string) (string, error) {
	entries, err := os.ReadDir(s.runDir(id))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue // removed while we looked
		}
		fmt.Fprintf(&b, "%s:%d:%d;", e.Name(), fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String(), nil
}

// NoRunError is the error of a reference that names no run in where; it
// wraps ErrNoRun.
func NoRunError(ref, where string) error { return &noRunError{ref: ref, dir: where} }

// ResolveAmong resolves ref as Store.Resolve does, for any source: list
// gives the runs newest first (for "last~N"), withPrefix the ids that start
// with a prefix (an exact id among them wins).
func ResolveAmong(ref, where string, list func() ([]RunInfo, error), withPrefix func(string) ([]string, error)) (string, error) {
	noRun := &noRunError{ref: ref, dir: where}
	if ref == "last" || strings.HasPrefix(ref, "last~") {
		n := 0
		if ref != "last" {
			var err error
			n, err = strconv.Atoi(strings.TrimPrefix(ref, "last~"))
			if err != nil || n < 0 {
				return "", noRun
			}
		}
		runs, err := list()
		if err != nil {
			return "", err
		}
		if n >= len(runs) {
			return "", noRun
		}
		return runs[n].ID, nil
	}
	if ref == "" || ref == "." || ref == ".." || strings.ContainsAny(ref, `/\`) || strings.HasPrefix(ref, ".") {
		return "", noRun
	}
	matches, err := withPrefix(ref)
	if err != nil {
		return "", err
	}
	switch {
	case slices.Contains(matches, ref):
		return ref, nil
	case len(matches) == 0:
		return "", noRun
	case len(matches) == 1:
		return matches[0], nil
	}
	slices.SortFunc(matches, compareIDs)
	return "", &ambiguousError{ref: ref, dir: where, ids: matches}
}

// SortNewestFirst orders runs as List does: by Created, newest first, then
// by id ("x-10" after "x-9").
func SortNewestFirst(runs []RunInfo) { sortNewestFirst(runs) }

// Complete fills the summary of a run whose spec, status and intervals are
// read: sum when the run recorded one (its status then decides r.Status),
// else one computed from the intervals with r.Status; then each step of a
// sweep with its full detail, also for an interrupted run or an older
// summary.
func (r *Run) Complete(sum *metrics.Summary) {
	if sum != nil {
		r.Status = cmp.Or(sum.Status, metrics.StatusComplete)
		r.Summary = *sum
	} else {
		r.Summary = r.computeSummary(r.Status)
	}
	r.Summary.Steps = r.Steps()
}

// fillFrom sets the figures of a List line from a recorded summary.
func (ri *RunInfo) fillFrom(sum *listSummary) {
	ri.Status = cmp.Or(sum.Status, metrics.StatusComplete)
	ri.TPS, ri.P95MS, ri.End, ri.Failed = sum.TPS, sum.Latency.P95, sum.End, sum.Failed
	ri.Replication, ri.Failover = sum.Replication, sum.Failover
	for _, f := range sum.Figures {
		if f.Name == "nopm" && f.Tx == "" {
			ri.NOPM = f.Value
		}
	}
}

// ListInfo is the List line of a run: spec and summary are spec.json and
// summary.json as recorded (summary nil when the run has none, status then
// says running or interrupted, and ivs are the intervals an interrupted
// run's figures come from). A spec or summary that does not decode makes
// the run corrupt. where is the run's directory, "" for other sources.
func ListInfo(id, where string, spec, summary []byte, status string, ivs func() ([]metrics.Interval, error)) RunInfo {
	var sp listSpec
	if err := json.Unmarshal(spec, &sp); err != nil {
		return RunInfo{ID: id, Status: StatusCorrupt, Dir: where}
	}
	ri := RunInfo{ID: id, Created: sp.Created, Label: sp.Label, Workload: sp.Workload,
		Clients: sp.Clients, Target: sp.Target, Dir: where, PlanTag: sp.PlanTag}
	if summary != nil {
		var sum listSummary
		if err := json.Unmarshal(summary, &sum); err != nil {
			ri.Status = StatusCorrupt
			return ri
		}
		ri.fillFrom(&sum)
		return ri
	}
	ri.Status = status
	if status == metrics.StatusInterrupted && ivs != nil {
		ri.summariseIntervals(ivs)
	}
	return ri
}

// summariseIntervals sets the figures of an interrupted run as Load (show)
// summarises it: from the intervals recorded.
func (ri *RunInfo) summariseIntervals(read func() ([]metrics.Interval, error)) {
	ivs, err := read()
	if err != nil || len(ivs) == 0 {
		return
	}
	acc := &metrics.Accumulator{}
	for _, iv := range ivs {
		acc.Add(iv)
	}
	var sum metrics.Summary
	acc.Fill(&sum)
	ri.TPS, ri.P95MS, ri.Failed = sum.TPS, sum.Latency.P95, sum.Failed
}

// HistogramLogBytes returns the run's histograms.hlog as recorded (nil when
// the run wrote none).
func (r *Run) HistogramLogBytes() ([]byte, error) {
	if r.HistogramLog != nil || r.Dir == "" {
		return r.HistogramLog, nil
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, HistogramsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// EncodeHistogramLog renders acc's latency histograms as the run's
// histograms.hlog (what Writer.Finish writes).
func EncodeHistogramLog(acc *metrics.Accumulator) ([]byte, error) { return encodeHistogramLog(acc) }
