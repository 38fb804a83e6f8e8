package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
)

// More file names inside a run directory.
const (
	// SamplesFile holds the server and host samples of the run, one Sample
	// per line, appended and fsynced as they come.
	SamplesFile = "samples.jsonl"
	// FindingsFile holds the end-of-run findings (a JSON array of Finding).
	FindingsFile = "findings.json"
)

// Sample is what one source (pg_stat_database, activity, host_cpu,
// host_disk...) saw at one instant: a set of named numeric series. Series
// names are unique across sources ("pg.xact_commit_per_s",
// "pg.wait.LWLock:WALWrite", "host.disk.vda.util_pct"), so a reader can
// draw any series by name without knowing it in advance; a series may be
// absent from some samples (a standby that appears, a statement that leaves
// the top N). Labels describe series or the source (a statement's text, the
// device holding the data directory); Note is a status line about the source
// ("pg_stat_statements: not installed, skipped"), typically on a sample
// without values.
type Sample struct {
	Time   time.Time          `json:"time"`
	Source string             `json:"source"`
	Values map[string]float64 `json:"values,omitempty"`
	Labels map[string]string  `json:"labels,omitempty"`
	Note   string             `json:"note,omitempty"`
}

// Severities of a Finding, least to most serious.
const (
	SeverityInfo     = "info"
	SeverityWarning  = "warning"
	SeverityCritical = "critical"
)

// Finding is one end-of-run observation that explains a result:
// "connections dropped from 950 to 628 at 12:01:05", "3 deadlocks".
type Finding struct {
	Severity string `json:"severity"` // SeverityInfo, SeverityWarning or SeverityCritical
	// Kind is a stable identifier of the observation ("deadlocks",
	// "connections_dropped", "checkpoints_requested"...), for tests and
	// comparisons; Message is for people.
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
	Time    time.Time `json:"time,omitzero"` // when it happened, if it happened at one time
}

// Point is one value of a series.
type Point struct {
	Time  time.Time
	Value float64
}

// syncEvery bounds how long an append to intervals.jsonl or samples.jsonl
// waits for its fsync: a file is fsynced at the first append once its
// oldest unsynced append is syncEvery old, and by Finish and Close. A
// process that is killed loses nothing of what it appended (the kernel
// holds it); a machine that crashes may lose the last syncEvery of each
// file and a tick's (the appends since the last fsync), never a line's
// part in the middle: Load ignores a torn last line. An fsync a tick cost
// an idle one-client run about a fifth of its background CPU.
const syncEvery = 10 * time.Second

// syncDue says whether an append made now must fsync, given when the
// oldest unsynced append was made (*dirty, zero: none; set to now).
func syncDue(dirty *time.Time, now time.Time) bool {
	if dirty.IsZero() {
		*dirty = now
	}
	return now.Sub(*dirty) >= syncEvery
}

// AppendSamples appends one compact JSON line per sample to samples.jsonl
// (created on first use) in a single write; it fsyncs once the oldest
// append not yet synced is syncEvery old. Values that are not
// finite numbers (NaN, ±Inf) are left out. As with AppendIntervals a write
// that fails part-way is cut back to the last whole line.
func (w *Writer) AppendSamples(ss ...Sample) error {
	if len(ss) == 0 {
		return nil
	}
	w.encMu.Lock()
	buf := w.encBuf[:0]
	for i := range ss {
		var err error
		if buf, err = w.enc.append(buf, finiteSample(ss[i])); err != nil {
			w.encMu.Unlock()
			return fmt.Errorf("encode sample of %s: %w", ss[i].Source, err)
		}
		buf = append(buf, '\n')
	}
	w.encBuf = buf
	defer w.encMu.Unlock() // buf is written below
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errClosed
	}
	path := w.Path(SamplesFile)
	if w.samples == nil {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, filePerm)
		if err != nil {
			return fmt.Errorf("append to %s: %w", path, err)
		}
		fi, err := f.Stat()
		if err == nil {
			err = syncDir(w.dir)
		}
		if err != nil {
			_ = f.Close()
			return fmt.Errorf("append to %s: %w", path, err)
		}
		w.samples, w.samplesSize = f, fi.Size()
	}
	sync := syncDue(&w.samplesDirty, time.Now())
	err := w.appendLines(w.samples, &w.samplesSize, &w.samplesTorn, buf, "samples", sync)
	if sync && err == nil {
		w.samplesDirty = time.Time{}
	}
	return err
}

// syncSamples fsyncs samples.jsonl if appends wait for it. w.mu is held.
func (w *Writer) syncSamples() error {
	if w.samples == nil || w.samplesDirty.IsZero() {
		return nil
	}
	if err := w.samples.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.samples.Name(), err)
	}
	w.samplesDirty = time.Time{}
	return nil
}

// appendSampleJSON appends s, whose values are finite, as encoding/json
// writes it, without its reflection (TestSampleJSON).
func appendSampleJSON(b []byte, s Sample) ([]byte, error) {
	var e sampleEncoder
	return e.append(b, s)
}

// maxEncoderSources bounds the sources a sampleEncoder remembers.
const maxEncoderSources = 256

// sampleEncoder writes samples as appendSampleJSON does, remembering what
// repeats from one tick to the next: each source's series names in order
// with their quoted keys (a source reports the same series tick after
// tick: no sort and no escaping then), and the last time written (a tick's
// samples share it). One goroutine at a time uses it.
type sampleEncoder struct {
	sources map[string]*sourceKeys
	at      time.Time // compared with ==: the same instant in another location formats otherwise
	atJSON  []byte
	vals    []float64
}

// sourceKeys are a source's series names, sorted, and each one's `"name":`.
type sourceKeys struct {
	names  []string
	quoted [][]byte
}

// keysOf returns the sorted names of vals and their keys, with vals'
// values in that order in e.vals.
func (e *sampleEncoder) keysOf(source string, vals map[string]float64) *sourceKeys {
	if k := e.sources[source]; k != nil && len(k.names) == len(vals) {
		e.vals = e.vals[:0]
		for _, n := range k.names {
			v, ok := vals[n]
			if !ok {
				break
			}
			e.vals = append(e.vals, v)
		}
		if len(e.vals) == len(k.names) {
			return k
		}
	}
	k := &sourceKeys{names: slices.Sorted(maps.Keys(vals))}
	k.quoted = make([][]byte, len(k.names))
	e.vals = e.vals[:0]
	for i, n := range k.names {
		w := metrics.JSONWriter{}
		w.Key(n)
		k.quoted[i] = w.B
		e.vals = append(e.vals, vals[n])
	}
	if e.sources == nil || len(e.sources) >= maxEncoderSources {
		e.sources = map[string]*sourceKeys{}
	}
	e.sources[source] = k
	return k
}

// append appends s, whose values are finite, as encoding/json writes it.
func (e *sampleEncoder) append(b []byte, s Sample) ([]byte, error) {
	w := metrics.JSONWriter{B: b[len(b):]} // its own document: no separator before it
	w.Open()
	w.Key("time")
	if e.atJSON == nil || s.Time != e.at {
		t := metrics.JSONWriter{}
		t.Time(s.Time)
		if t.Err != nil {
			return b, t.Err
		}
		e.at, e.atJSON = s.Time, t.B
	}
	w.Raw(e.atJSON)
	w.Key("source")
	w.String(s.Source)
	if len(s.Values) > 0 {
		w.Key("values")
		w.Open()
		k := e.keysOf(s.Source, s.Values)
		for i, q := range k.quoted {
			w.Raw(q)
			w.Float(e.vals[i])
		}
		w.Close()
	}
	if len(s.Labels) > 0 {
		w.Key("labels")
		w.StringMap(s.Labels)
	}
	if s.Note != "" {
		w.Key("note")
		w.String(s.Note)
	}
	w.Close()
	return append(b, w.B...), w.Err
}

// finiteSample returns s without its non-finite values (which JSON cannot
// hold), copying the map only when there are some.
func finiteSample(s Sample) Sample {
	bad := 0
	for _, v := range s.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			bad++
		}
	}
	if bad == 0 {
		return s
	}
	vals := make(map[string]float64, len(s.Values)-bad)
	for k, v := range s.Values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals[k] = v
		}
	}
	s.Values = vals
	return s
}

// SetFindings writes findings.json (atomically), replacing any earlier one.
func (w *Writer) SetFindings(fs []Finding) error {
	if fs == nil {
		fs = []Finding{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errClosed
	}
	return w.full("write "+FindingsFile, writeJSONAtomic(w.dir, FindingsFile, fs))
}

// closeSamples syncs and closes samples.jsonl if it was opened. w.mu is held.
func (w *Writer) closeSamples() error {
	if w.samples == nil {
		return nil
	}
	err := errors.Join(w.samples.Sync(), w.samples.Close())
	w.samples = nil
	return err
}

// SeriesNames returns the names of every series in the run's samples,
// sorted.
func (r *Run) SeriesNames() []string {
	seen := map[string]bool{}
	for i := range r.Samples {
		for k := range r.Samples[i].Values {
			seen[k] = true
		}
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Series returns the points of one series in time order (samples are
// stored in the order they were taken).
func (r *Run) Series(name string) []Point {
	var pts []Point
	for i := range r.Samples {
		if v, ok := r.Samples[i].Values[name]; ok {
			pts = append(pts, Point{Time: r.Samples[i].Time, Value: v})
		}
	}
	return pts
}

// Notes returns the status notes of the run's samples, each once, in the
// order they first appeared.
func (r *Run) Notes() []string {
	var notes []string
	seen := map[string]bool{}
	for i := range r.Samples {
		if n := r.Samples[i].Note; n != "" && !seen[n] {
			seen[n] = true
			notes = append(notes, n)
		}
	}
	return notes
}

// readFindings reads findings.json; a missing file holds none.
func readFindings(path string) ([]Finding, error) {
	var fs []Finding
	if err := readJSON(path, &fs); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return fs, nil
}

// readJSONLines reads a JSON-lines file that only grows (intervals.jsonl,
// samples.jsonl). A final line that is cut short or does not parse is the
// trace of a writer that died mid-write: it is ignored and truncated is set.
// A bad line elsewhere is an error naming the file and line. A missing file
// holds nothing.
func readJSONLines[T any](path string) (vs []T, truncated bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var bad error // a line that did not parse; an error unless it is the last
	for lineNo := 1; ; lineNo++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, false, fmt.Errorf("read %s: %w", path, rerr)
		}
		if len(bytes.TrimSpace(line)) > 0 { // NUL padding is not space: it is a bad line
			if bad != nil {
				return nil, false, bad
			}
			// A final line missing only its newline parses and is kept.
			var v T
			if perr := json.Unmarshal(line, &v); perr != nil {
				bad = fmt.Errorf("%s:%d: %w", path, lineNo, perr)
			} else {
				vs = append(vs, v)
			}
		}
		if rerr == io.EOF {
			return vs, bad != nil, nil
		}
	}
}
