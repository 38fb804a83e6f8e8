package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pgarena/pgarena/internal/metrics"
)

// StatusCorrupt is the List status of a run whose spec.json or
// summary.json cannot be read.
const StatusCorrupt = "corrupt"

// ErrAmbiguous is wrapped by the error of Resolve for an id prefix that
// matches several runs.
var ErrAmbiguous = errors.New("ambiguous run reference")

type noRunError struct{ ref, dir string }

func (e *noRunError) Error() string {
	return fmt.Sprintf("no run %q in %s (see pgarena list)", e.ref, e.dir)
}

func (e *noRunError) Unwrap() error { return ErrNoRun }

type ambiguousError struct {
	ref, dir string
	ids      []string
}

func (e *ambiguousError) Error() string {
	const show = 5
	ids := e.ids
	more := ""
	if len(ids) > show {
		more = fmt.Sprintf(" and %d more", len(ids)-show)
		ids = ids[:show]
	}
	return fmt.Sprintf("run %q is ambiguous in %s: %s%s (see pgarena list)", e.ref, e.dir, strings.Join(ids, ", "), more)
}

func (e *ambiguousError) Unwrap() error { return ErrAmbiguous }

// RunInfo is one line of List.
type RunInfo struct {
	ID       string    `json:"id"`
	Created  time.Time `json:"created"`
	Label    string    `json:"label,omitempty"`
	Workload string    `json:"workload"`
	Clients  int       `json:"clients"`
	TPS      float64   `json:"tps"`
	P95MS    float64   `json:"p95_ms"`
	Status   string    `json:"status"`
	Dir      string    `json:"dir"`
	// End is when a finished run ended (zero while running or interrupted).
	End time.Time `json:"end,omitzero"`
	// Target is where it ran (redacted), Failed its failed transactions,
	// NOPM TPC-C's figure of merit (0 when the run has none).
	Target string  `json:"target,omitempty"`
	Failed int64   `json:"failed,omitempty"`
	NOPM   float64 `json:"nopm,omitempty"`
	// Replication and Failover are the summary's (nil when it has none).
	Replication *metrics.Replication `json:"replication,omitempty"`
	Failover    *metrics.Failover    `json:"failover,omitempty"`
	// PlanTag is the run's plan and cell, if a plan ran it.
	PlanTag
}

// listSpec and listSummary are the parts of spec.json and summary.json that
// List decodes.
type listSpec struct {
	Created  time.Time `json:"created"`
	Label    string    `json:"label"`
	Workload string    `json:"workload"`
	Clients  int       `json:"clients"`
	Target   string    `json:"target"`
	PlanTag
}

type listSummary struct {
	End     time.Time `json:"end"`
	Status  string    `json:"status"`
	TPS     float64   `json:"tps"`
	Failed  int64     `json:"failed"`
	Latency struct {
		P95 float64 `json:"p95"`
	} `json:"latency_ms"`
	Figures []struct {
		Name  string  `json:"name"`
		Tx    string  `json:"tx"`
		Value float64 `json:"value"`
	} `json:"figures"`
	Replication *metrics.Replication `json:"replication"`
	Failover    *metrics.Failover    `json:"failover"`
}

// List returns the runs of the store, newest first (by Created, then id).
// Directories without spec.json are not runs and are skipped. It reads only
// spec.json and summary.json of each run; a run without a summary is
// running (its lock is held: TPS and P95 left 0) or interrupted (its
// intervals summarised, as Load does).
func (s *Store) List() ([]RunInfo, error) {
	names, err := s.runNames()
	if err != nil {
		return nil, err
	}
	// Reading is dominated by system calls: spread it over a few goroutines.
	infos := make([]RunInfo, len(names))
	workers := min(runtime.GOMAXPROCS(0), 8, len(names))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(names) {
					return
				}
				infos[i] = s.runInfo(names[i])
			}
		})
	}
	wg.Wait()
	runs := slices.DeleteFunc(infos, func(ri RunInfo) bool { return ri.ID == "" })
	sortNewestFirst(runs)
	return runs, nil
}

// runInfo reads the List line of the run directory name; a zero RunInfo if
// it is not a run. A run that cannot be read is listed as corrupt rather
// than failing the whole list.
func (s *Store) runInfo(name string) RunInfo {
	dir := s.runDir(name)
	spec, err := os.ReadFile(filepath.Join(dir, SpecFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return RunInfo{} // not a run, or one whose spec is not written yet
		}
		return RunInfo{ID: name, Status: StatusCorrupt, Dir: dir}
	}
	var sum json.RawMessage
	found, live, err := readSummary(dir, &sum)
	if err != nil {
		ri := ListInfo(name, dir, spec, nil, "", nil)
		if ri.ID != "" {
			ri.Status = StatusCorrupt
		}
		return ri
	}
	if !found {
		sum = nil
	}
	return ListInfo(name, dir, spec, sum, live, func() ([]metrics.Interval, error) {
		ivs, _, err := readIntervals(filepath.Join(dir, IntervalsFile))
		return ivs, err
	})
}

// runNames returns the names of the directories in the store that may be
// runs (hidden entries excluded).
func (s *Store) runNames() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no results directory yet: no runs
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// readSummary decodes summary.json of the run in dir into v (a
// metrics.Summary or a part of it) and reports whether it exists. Without
// one, live is the status: running while the writer holds the run's lock,
// interrupted once it is gone.
func readSummary(dir string, v any) (found bool, live string, err error) {
	path := filepath.Join(dir, SummaryFile)
	if err = readJSON(path, v); !errors.Is(err, os.ErrNotExist) {
		return err == nil, "", err
	}
	held, err := lockHeld(filepath.Join(dir, LockFile))
	if err != nil {
		return false, "", err
	}
	if held {
		return false, metrics.StatusRunning, nil
	}
	// The writer writes summary.json before it releases the lock: look
	// again, in case it finished between the first look and the probe.
	if err = readJSON(path, v); !errors.Is(err, os.ErrNotExist) {
		return err == nil, "", err
	}
	return false, metrics.StatusInterrupted, nil
}

func sortNewestFirst(runs []RunInfo) {
	slices.SortFunc(runs, func(a, b RunInfo) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return compareIDs(b.ID, a.ID)
	})
}

// compareIDs orders run ids so that "x-10" follows "x-9": runs of digits
// compare by value.
func compareIDs(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitPrefix(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// Resolve returns the id of the run ref names: an id, an unambiguous id
// prefix, "last" (the newest run) or "last~N" (N runs before the newest).
func (s *Store) Resolve(ref string) (string, error) {
	return ResolveAmong(ref, s.dir, s.List, func(prefix string) ([]string, error) {
		if isRun(s.runDir(prefix)) {
			return []string{prefix}, nil
		}
		names, err := s.runNames()
		if err != nil {
			return nil, err
		}
		var matches []string
		for _, name := range names {
			if strings.HasPrefix(name, prefix) && isRun(s.runDir(name)) {
				matches = append(matches, name)
			}
		}
		return matches, nil
	})
}

func isRun(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, SpecFile))
	return err == nil && fi.Mode().IsRegular()
}

// Run is a run read back from disk.
type Run struct {
	ID        string             `json:"id"`
	Dir       string             `json:"dir"`
	Spec      RunSpec            `json:"spec"`
	Server    *ServerInfo        `json:"server,omitempty"` // nil until the run connected
	Intervals []metrics.Interval `json:"intervals"`
	// Summary comes from summary.json, or is computed from the intervals
	// for a run that is running or was interrupted.
	Summary metrics.Summary `json:"summary"`
	Status  string          `json:"status"`
	// Truncated is set when the last line of intervals.jsonl or
	// samples.jsonl was torn (the writer died mid-write) and was ignored.
	Truncated bool `json:"truncated,omitempty"`
	// Samples are the server and host samples (samples.jsonl) in the order
	// they were taken; Findings the end-of-run findings (findings.json).
	Samples  []Sample  `json:"samples,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
	// HistogramLog is histograms.hlog of a run read from a source other
	// than a directory (Dir is then empty); nil when it has none.
	HistogramLog []byte `json:"-"`
}

// Load reads the run ref names (see Resolve): spec, server info, every
// interval and the summary. Without summary.json the status is running if
// the run's lock is held, else interrupted, and the summary is computed from
// the intervals.
func (s *Store) Load(ref string) (*Run, error) {
	id, err := s.Resolve(ref)
	if err != nil {
		return nil, err
	}
	dir := s.runDir(id)
	r := &Run{ID: id, Dir: dir}
	// The status is decided before the intervals are read: a run that ends
	// while being read then shows as running with fewer intervals, never as
	// interrupted.
	var sum metrics.Summary
	haveSummary, status, err := readSummary(dir, &sum)
	if err != nil {
		return nil, fmt.Errorf("load run %s: %w", id, err)
	}
	if haveSummary {
		status = cmp.Or(sum.Status, metrics.StatusComplete)
	}
	if err := readJSON(filepath.Join(dir, SpecFile), &r.Spec); err != nil {
		return nil, fmt.Errorf("load run %s: %w", id, err)
	}
	var srv ServerInfo
	switch err := readJSON(filepath.Join(dir, ServerFile), &srv); {
	case err == nil:
		r.Server = &srv
	case errors.Is(err, os.ErrNotExist):
	default:
		return nil, fmt.Errorf("load run %s: %w", id, err)
	}
	if r.Intervals, r.Truncated, err = readIntervals(filepath.Join(dir, IntervalsFile)); err != nil {
		return nil, fmt.Errorf("load run %s: %w", id, err)
	}
	samples, torn, err := readJSONLines[Sample](filepath.Join(dir, SamplesFile))
	if err != nil {
		return nil, fmt.Errorf("load run %s: %w", id, err)
	}
	r.Samples, r.Truncated = samples, r.Truncated || torn
	if r.Findings, err = readFindings(filepath.Join(dir, FindingsFile)); err != nil {
		return nil, fmt.Errorf("load run %s: %w", id, err)
	}
	r.Status = status
	if haveSummary {
		r.Complete(&sum)
	} else {
		r.Complete(nil)
	}
	return r, nil
}

// computeSummary builds the summary of a run that did not write one.
func (r *Run) computeSummary(status string) metrics.Summary {
	sum := metrics.Summary{
		RunID:     r.ID,
		Status:    status,
		Workload:  r.Spec.Workload,
		Label:     r.Spec.Label,
		QueryMode: r.Spec.QueryMode,
		Clients:   r.Spec.Clients,
		Threads:   r.Spec.Threads,
		Params:    r.Spec.Params,
	}
	if n := len(r.Intervals); n > 0 {
		sum.Start, sum.End = r.Intervals[0].Start, r.Intervals[n-1].End
	}
	r.Accumulate().Fill(&sum)
	return sum
}

// Accumulate merges the run's intervals (warm-up excluded) into an
// Accumulator: the run's full histograms.
func (r *Run) Accumulate() *metrics.Accumulator {
	acc := &metrics.Accumulator{}
	for _, iv := range r.Intervals {
		acc.Add(iv)
	}
	return acc
}

// Histograms returns the full latency histogram of each transaction type,
// keyed by name: from histograms.hlog when the run wrote one, else merged
// from the intervals.
func (r *Run) Histograms() (map[string]*hdr.Histogram, error) {
	if r.HistogramLog != nil {
		return ReadHistogramLog(bytes.NewReader(r.HistogramLog))
	}
	if r.Dir == "" {
		return r.Accumulate().Histograms(), nil
	}
	f, err := os.Open(filepath.Join(r.Dir, HistogramsFile))
	if errors.Is(err, os.ErrNotExist) {
		return r.Accumulate().Histograms(), nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := ReadHistogramLog(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return m, nil
}

// ReadHistogramLog reads an HdrHistogram log, merging the histograms of
// each tag (untagged ones under "").
func ReadHistogramLog(rd io.Reader) (map[string]*hdr.Histogram, error) {
	lr := hdr.NewHistogramLogReader(rd)
	m := make(map[string]*hdr.Histogram)
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return nil, err
		}
		if h == nil {
			return m, nil
		}
		if prev, ok := m[h.Tag()]; ok {
			prev.Merge(h)
		} else {
			m[h.Tag()] = h
		}
	}
}

// readIntervals reads intervals.jsonl (see readJSONLines).
func readIntervals(path string) (ivs []metrics.Interval, truncated bool, err error) {
	return readJSONLines[metrics.Interval](path)
}

// Steps returns one summary per step of a sweep run (nil for a run that is
// not a sweep), computed from the intervals so that an interrupted run and a
// summary.json written before steps carried per-type rows give the same
// detail. What the intervals do not hold (clients, asked-for rate, status,
// stop reason) comes from summary.json, else from the spec's load model
// ("2 clients, 4 clients at 100 tx/s"); a step the summary does not know is
// complete unless it is the last one of a run that did not finish.
func (r *Run) Steps() []metrics.StepSummary {
	steps := metrics.StepsOf(r.Intervals)
	if len(steps) == 0 {
		return r.Summary.Steps
	}
	saved := map[int]metrics.StepSummary{}
	for _, st := range r.Summary.Steps {
		saved[st.Step] = st
	}
	planned := parseSweep(r.Spec.Load["sweep"])
	for i := range steps {
		st := &steps[i]
		if sv, ok := saved[st.Step]; ok {
			st.Clients, st.Rate, st.Status, st.StopReason = sv.Clients, sv.Rate, sv.Status, sv.StopReason
			continue
		}
		if st.Step <= len(planned) {
			st.Clients, st.Rate = planned[st.Step-1].Clients, planned[st.Step-1].Rate
		}
		if i == len(steps)-1 && r.Status != metrics.StatusComplete {
			st.Status = r.Status
		}
	}
	return steps
}

// parseSweep reads the spec's description of sweep steps, as the run
// command writes it: "2 clients, 4 clients at 100 tx/s". Parts it cannot
// read are left zero.
func parseSweep(v string) []metrics.StepSummary {
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	out := make([]metrics.StepSummary, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if n, err := fmt.Sscanf(p, "%d clients at %g tx/s", &out[i].Clients, &out[i].Rate); err == nil && n == 2 {
			continue
		}
		_, _ = fmt.Sscanf(p, "%d clients", &out[i].Clients)
	}
	return out
}
