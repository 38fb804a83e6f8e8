package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pgarena/pgarena/internal/metrics"
)

// RunSpec is what a run was asked to do and where, written to spec.json
// before anything connects. Secrets must already be redacted by the caller.
type RunSpec struct {
	ID             string    `json:"id"` // set by Create
	Created        time.Time `json:"created"`
	PgarenaVersion string    `json:"pgarena_version"`
	CommandLine    []string  `json:"command_line"` // redacted by the caller
	// Config is the run's configuration (internal/runconfig), redacted by
	// the caller; runs recorded before it existed have none.
	Config SortedJSON `json:"config,omitempty"`

	Workload string            `json:"workload"`
	Params   map[string]string `json:"params,omitempty"`
	Seed     int64             `json:"seed"`
	Label    string            `json:"label,omitempty"`

	Clients      int     `json:"clients"`
	Threads      int     `json:"threads"`
	DurationS    float64 `json:"duration_s"`
	Transactions int     `json:"transactions"` // per client; 0 = run by time
	QueryMode    string  `json:"query_mode"`
	ConnectPerTx bool    `json:"connect_per_tx"`
	MaxTries     int     `json:"max_tries"`
	TickS        float64 `json:"tick_s"`

	// SessionSettings are the --session-set settings of the workload's
	// connections, "key=value" or "group:key=value", as given.
	SessionSettings []string `json:"session_settings,omitempty"`

	Target   string `json:"target"`   // DSN, password redacted by the caller
	Embedded bool   `json:"embedded"` // an ephemeral local cluster

	Host HostInfo `json:"host"`
	// Load describes the load model: model (closed/open), rate, schedule,
	// arrival, latency_limit, ramp, warmup, autostop, sweep.
	Load map[string]string `json:"load,omitempty"`

	// PlanTag names the campaign cell this run is part of (empty outside a plan).
	PlanTag

	// Segment is "i/N" when the run is segment i of a run split over N
	// processes (--segment): Clients are then this segment's share and
	// WholeClients the whole run's. SegmentOf is the whole run's identity,
	// the same in each of its segments (--segment-of, set by --agents and
	// pgarena k8s); StartAt is the shared start (--start-at).
	Segment      string    `json:"segment,omitempty"`
	SegmentOf    string    `json:"segment_of,omitempty"`
	WholeClients int       `json:"whole_clients,omitempty"`
	StartAt      time.Time `json:"start_at,omitzero"`
	// MergedFrom lists the runs a merged run was made of (pgarena merge),
	// in segment order; MergeNotes say what was missing or cut short.
	MergedFrom []string `json:"merged_from,omitempty"`
	MergeNotes []string `json:"merge_notes,omitempty"`
}

// PlanTag tags a run with the plan (campaign) and the cell of the plan it
// ran for; a plan's state is derived from these tags (internal/plan).
type PlanTag struct {
	Plan     string `json:"plan,omitempty"`      // the plan's name
	Cell     string `json:"cell,omitempty"`      // the cell's stable id
	CellName string `json:"cell_name,omitempty"` // target/workload/axis=value..., for people
	Repeat   int    `json:"repeat,omitempty"`    // 1-based repeat of the cell
}

// ServerInfo is what the server said about itself, written to server.json
// once connected.
type ServerInfo struct {
	Version    string            `json:"version"`
	VersionNum int               `json:"version_num"`
	Settings   map[string]string `json:"settings,omitempty"`
	DataDir    string            `json:"data_dir,omitempty"`
	// Pooler is the pooler or proxy the clients went through, if any.
	Pooler *PoolerInfo `json:"pooler,omitempty"`
	// ClockOffsetMS is the server's clock_timestamp() minus this
	// machine's clock at the midpoint of the query (ms), ClockRTTMS the
	// query's round trip (the offset's uncertainty is half of it): how
	// segments on several machines compare on the wall clock.
	ClockOffsetMS *float64 `json:"clock_offset_ms,omitempty"`
	ClockRTTMS    float64  `json:"clock_rtt_ms,omitempty"`
	// Citus is the topology when the target is a Citus coordinator.
	Citus *CitusInfo `json:"citus,omitempty"`
}

// PoolerInfo describes a pooler in front of the server: kind (pgbouncer,
// haproxy, pgpool, console), mode, pool size (0: no pooling), version, a
// note and its generated settings (no passwords).
type PoolerInfo struct {
	Kind     string            `json:"kind"`
	Mode     string            `json:"mode,omitempty"`
	PoolSize int               `json:"pool_size,omitempty"`
	Version  string            `json:"version,omitempty"`
	Note     string            `json:"note,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
}

// idTimeLayout is the time part of a run id: UTC, sortable.
const idTimeLayout = "20060102-150405"

// maxCollisions bounds the "-N" suffixes tried for one id.
const maxCollisions = 10000

// idTagLen is how many random characters a run id ends with.
const idTagLen = 4

// Create makes a new run directory and returns its Writer. The id is
// spec.ID when the caller gives one (a fixture's), else the UTC creation
// time, the workload, a segment's "iofN" and four random characters
// ("20261122-031512-tpcc-1of4-k3f9"): sorted by time, and unique across
// machines, whose runs are copied into one directory (segments, then
// pgarena merge). "-2", "-3"... are appended if the id is taken; os.Mkdir
// makes the choice race-free between processes. spec.Created defaults to
// now; spec.ID is set. Before spec.json appears the run's lock is taken, so
// a reader never mistakes a starting run for a dead one.
func (s *Store) Create(spec RunSpec) (*Writer, error) {
	if spec.Created.IsZero() {
		spec.Created = time.Now()
	}
	base := spec.ID
	if base == "" {
		base = newID(spec.Created, spec.Workload, spec.Segment)
	} else if w := idWord(base); w != base || strings.Contains(base, "..") {
		return nil, fmt.Errorf("create run: %q is not a run id (lower-case letters, digits, '.', '_' and '-')", base)
	}
	var id, dir string
	for n := 1; ; n++ {
		if n > maxCollisions {
			return nil, fmt.Errorf("create run %s in %s: too many runs with this id", base, s.dir)
		}
		id = base
		if n > 1 {
			id += "-" + strconv.Itoa(n)
		}
		dir = s.runDir(id)
		err := os.Mkdir(dir, dirPerm)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			if isNoSpace(err) {
				return nil, noSpace(s.dir, "create run "+id, err)
			}
			return nil, fmt.Errorf("create run: %w", err)
		}
	}
	spec.ID = id
	w, err := s.initRun(dir, spec)
	if err != nil {
		// Nothing half-written is left looking like a run.
		_ = os.RemoveAll(dir) // ours alone: just made by Mkdir
		if isNoSpace(err) {
			return nil, noSpace(s.dir, "create run "+id, err)
		}
		return nil, fmt.Errorf("create run %s: %w", id, err)
	}
	return w, nil
}

func (s *Store) initRun(dir string, spec RunSpec) (*Writer, error) {
	w := &Writer{id: spec.ID, dir: dir}
	var err error
	if w.lock, err = lockExclusive(filepath.Join(dir, LockFile)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = w.lock.Close()
		}
	}()
	if err = writeJSONAtomic(dir, SpecFile, spec); err != nil {
		return nil, err
	}
	w.intervals, err = os.OpenFile(filepath.Join(dir, IntervalsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, filePerm)
	if err != nil {
		return nil, err
	}
	if err = syncDir(dir); err != nil {
		_ = w.intervals.Close()
		return nil, err
	}
	if err = syncDir(s.dir); err != nil { // the run directory's own entry
		_ = w.intervals.Close()
		return nil, err
	}
	return w, nil
}

// newID is a fresh run id: time, workload, segment ("i/N" as "iofN") and
// a random tag.
func newID(created time.Time, workload, segment string) string {
	id := created.UTC().Format(idTimeLayout) + "-" + idWord(workload)
	if segment != "" {
		id += "-" + idWord(strings.Replace(segment, "/", "of", 1))
	}
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	tag := make([]byte, idTagLen)
	for i := range tag {
		tag[i] = letters[rand.IntN(len(letters))]
	}
	return id + "-" + string(tag)
}

// idWord makes a workload name safe as part of a run id: lower case letters,
// digits, '.', '_' and '-'; anything else becomes '_'.
func idWord(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "run"
	}
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return strings.Trim(string(b), ".")
}

// Writer appends to one run directory. Its methods may be called from any
// goroutine; they serialize on a mutex.
type Writer struct {
	id, dir string

	mu        sync.Mutex
	lock      *os.File // holds the flock; nil once closed
	intervals *os.File
	size      int64 // bytes of intervals.jsonl known to be whole lines
	// torn is set when a failed append could not be cut back to size:
	// later appends would follow a torn line, so they are refused.
	torn error
	// intervalsDirty is when the oldest append to intervals.jsonl not yet fsynced
	// was made (zero: all synced).
	intervalsDirty time.Time
	closed         bool

	samples     *os.File // samples.jsonl, opened by the first AppendSamples
	samplesSize int64    // bytes of samples.jsonl known to be whole lines
	samplesTorn error    // as torn, for samples.jsonl
	// samplesDirty is when the oldest append to samples.jsonl not yet
	// fsynced was made (zero: all synced).
	samplesDirty time.Time

	// encMu guards the samples' encoder and its buffer (AppendSamples
	// encodes outside mu).
	encMu  sync.Mutex
	enc    sampleEncoder
	encBuf []byte
}

// ID returns the run id.
func (w *Writer) ID() string { return w.id }

// Dir returns the run directory.
func (w *Writer) Dir() string { return w.dir }

// Path returns the path of a file named name in the run directory.
func (w *Writer) Path(name string) string { return filepath.Join(w.dir, name) }

var errClosed = errors.New("run writer is closed")

// SetServer writes server.json (atomically).
func (w *Writer) SetServer(info ServerInfo) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errClosed
	}
	return w.full("write "+ServerFile, writeJSONAtomic(w.dir, ServerFile, info))
}

// full wraps err as ErrDiskFull when the disk is full; op says what was
// being written.
func (w *Writer) full(op string, err error) error {
	return noSpace(filepath.Dir(w.dir), "run "+w.id+": "+op, err)
}

// appendLines writes buf, whole lines, at the end of f, whose whole lines
// end at *size, and fsyncs if sync. If the write or the fsync fails, f is
// cut back to *size so that nothing follows a torn line; if even that
// fails, *torn keeps the error and later appends are refused.
func (w *Writer) appendLines(f *os.File, size *int64, torn *error, buf []byte, what string, sync bool) error {
	if *torn != nil {
		return *torn
	}
	path := f.Name()
	n, err := f.Write(buf)
	if err == nil {
		if !sync {
			*size += int64(n)
			return nil
		}
		if err = f.Sync(); err == nil {
			*size += int64(n)
			return nil
		}
		err = fmt.Errorf("sync: %w", err)
	}
	if n > 0 {
		if terr := f.Truncate(*size); terr != nil {
			*torn = fmt.Errorf("%s is torn at byte %d and could not be cut back (%v): no more appends", path, *size, terr)
		}
	}
	return w.full("append "+what+" to "+filepath.Base(path), fmt.Errorf("append to %s: %w", path, err))
}

// AppendIntervals appends one compact JSON line per interval to
// intervals.jsonl in a single write; it fsyncs once the oldest append not
// yet synced is syncEvery old (samples.go). If the write fails
// part-way the file is cut back to its last whole line, so later appends
// never follow a torn one. A full disk gives an error wrapping ErrDiskFull.
func (w *Writer) AppendIntervals(ivs ...metrics.Interval) error {
	if len(ivs) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for i := range ivs {
		// MarshalJSON writes what json.Marshal would (compact, HTML
		// escaped: TestIntervalJSON) without its reflection and its
		// second pass over the text.
		b, err := ivs[i].MarshalJSON()
		if err != nil {
			return fmt.Errorf("encode interval %d: %w", ivs[i].Seq, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errClosed
	}
	what := fmt.Sprintf("interval %d", ivs[0].Seq)
	if len(ivs) > 1 {
		what = fmt.Sprintf("intervals %d-%d", ivs[0].Seq, ivs[len(ivs)-1].Seq)
	}
	sync := syncDue(&w.intervalsDirty, time.Now())
	err := w.appendLines(w.intervals, &w.size, &w.torn, buf.Bytes(), what, sync)
	if sync && err == nil {
		w.intervalsDirty = time.Time{}
	}
	return err
}

// Finish records the end of the run (intervals.jsonl and samples.jsonl
// synced): histograms.hlog with the full latency
// histogram of each transaction type in acc (nil: none), then summary.json,
// both atomically. summary.json goes last because its presence marks a
// finished run. sum.RunID defaults to the run id. The run stays locked until
// Close.
func (w *Writer) Finish(sum metrics.Summary, acc *metrics.Accumulator) error {
	if sum.RunID == "" {
		sum.RunID = w.id
	}
	hlog, err := encodeHistogramLog(acc)
	if err != nil {
		return fmt.Errorf("encode %s: %w", w.Path(HistogramsFile), err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errClosed
	}
	if err := w.intervals.Sync(); err != nil {
		return w.full("sync "+IntervalsFile, fmt.Errorf("sync %s: %w", w.Path(IntervalsFile), err))
	}
	w.intervalsDirty = time.Time{}
	if err := w.syncSamples(); err != nil {
		return w.full("sync "+SamplesFile, err)
	}
	if err := writeFileAtomic(w.dir, HistogramsFile, hlog); err != nil {
		return w.full("write "+HistogramsFile, fmt.Errorf("write %s: %w", w.Path(HistogramsFile), err))
	}
	return w.full("write "+SummaryFile, writeJSONAtomic(w.dir, SummaryFile, sum))
}

// Close closes intervals.jsonl (and samples.jsonl) and releases the run's lock. It is safe to
// call more than once; a run closed without Finish reads as interrupted.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var errs []error
	if err := w.intervals.Sync(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, w.intervals.Close())
	errs = append(errs, w.closeSamples())
	errs = append(errs, w.lock.Close()) // closing the last descriptor drops the flock
	w.lock = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close run %s: %w", w.id, err)
	}
	return nil
}

// encodeHistogramLog renders acc's latency histograms as an HdrHistogram
// log: one interval line per transaction type covering the measured part of
// the run, tagged with the type's name.
func encodeHistogramLog(acc *metrics.Accumulator) ([]byte, error) {
	var buf bytes.Buffer
	lw := hdr.NewHistogramLogWriter(&buf)
	if err := lw.OutputLogFormatVersion(); err != nil {
		return nil, err
	}
	if err := lw.OutputComment("[pgarena: latency in microseconds (end - intended start), measured part of the run, one histogram per transaction type]"); err != nil {
		return nil, err
	}
	if acc != nil && !acc.First.IsZero() {
		if err := lw.OutputStartTime(acc.First.UnixMilli()); err != nil {
			return nil, err
		}
	}
	if err := lw.OutputLegend(); err != nil {
		return nil, err
	}
	if acc == nil {
		return buf.Bytes(), nil
	}
	// Interval lines as hdr.HistogramLogWriter writes them (absolute
	// times, max in ms as a fraction of the ns ratio), with metrics'
	// encoder: the same bytes, without a fresh compressor per histogram.
	start, end := float64(acc.First.UnixMilli())/1000, float64(acc.Last.UnixMilli())/1000
	for i := range acc.Tx {
		t := &acc.Tx[i]
		enc, err := t.EncodeLatency()
		if err != nil {
			return nil, fmt.Errorf("histogram %s: %w", t.Name, err)
		}
		fmt.Fprintf(&buf, "Tag=%s,%f,%f,%f,%s\n", hlogTag(t.Name, i), start, end-start, float64(t.LatencyMax())/hdr.MsToNsRatio, enc)
	}
	return buf.Bytes(), nil
}

// hlogTag makes a transaction name usable as an hlog tag, which may not
// contain commas, spaces or line breaks.
func hlogTag(name string, i int) string {
	if name == "" {
		return "tx" + strconv.Itoa(i)
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case ',', ' ', '\t', '\r', '\n':
			return '_'
		}
		return r
	}, name)
}
