package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Interval is what happened between two ticks.
type Interval struct {
	Seq    int       // 1-based position in the run
	Start  time.Time // previous tick (run start for the first)
	End    time.Time
	Warmup bool // excluded from the summary
	// Drain is set on the intervals after the end of the measured time,
	// while transactions still running then finish: their time is not
	// measured time; what finishes in them is counted by its own class
	// (TxStats.Unfinished, or the measured time if it ended before).
	Drain bool
	// Connected is the number of clients holding an open connection at
	// End, set by the driver; an outage shows as a drop.
	Connected int
	// TargetRate is the scheduled arrival rate (tx/s) at End for open-loop
	// runs; 0 in a closed loop.
	TargetRate float64
	// Step numbers the step of a sweep (0 outside sweeps).
	Step int
	Tx   []TxStats // indexed like Recorder.TxNames

	// lease lends the histograms of Tx when its Recorder reuses them
	// (nil: they are the interval's own).
	lease *lease
}

// TxStats is one transaction type's share of an interval or run.
type TxStats struct {
	Name   string // "group/type" when the run has client groups
	Group  string // the client group; empty without groups
	Count  int64  // committed
	Errors ErrorCounts
	// Examples keeps the first and last failure of each class, with its
	// SQLSTATE and message.
	Examples ErrorExamples
	Retries  int64
	Retried  int64 // transactions retried at least once
	Skipped  int64 // not started: already later than the latency limit
	Late     int64 // committed, but later than the latency limit
	// Unfinished counts those still running when the measured time ended.
	Unfinished Unfinished
	Latency    *hdr.Histogram // µs, end − intended start, committed only
	Service    *hdr.Histogram // µs, end − start

	// latBuckets and svcBuckets list the non-empty buckets of Latency and
	// Service as Tick and merges made them (nil: not known; read from the
	// histogram when needed). A histogram changed afterwards by other
	// means must not keep them: only Tick, MergeTx and Accumulator set them.
	latBuckets, svcBuckets []bucketCount
	// Statements holds per-command times of the type's script, indexed
	// like workload.StatementLister's commands; nil unless asked (-r).
	Statements []StmtStat
}

// StmtStat is one command's share of the per-statement latencies (pgbench
// -r): how many times it completed and their total time, and how many
// transactions failed at it, or were retried after failing at it.
type StmtStat struct {
	Count    int64 `json:"n"`
	SumNS    int64 `json:"sum_ns"`
	Failures int64 `json:"failures,omitempty"`
	Retries  int64 `json:"retries,omitempty"`
}

// addStmts adds o's per-command times to dst, growing it.
func addStmts(dst, o []StmtStat) []StmtStat {
	for len(dst) < len(o) {
		dst = append(dst, StmtStat{})
	}
	for i, s := range o {
		dst[i].Count += s.Count
		dst[i].SumNS += s.SumNS
		dst[i].Failures += s.Failures
		dst[i].Retries += s.Retries
	}
	return dst
}

// Duration is the length of the interval.
func (iv *Interval) Duration() time.Duration { return iv.End.Sub(iv.Start) }

// Total merges the transaction types of iv into one TxStats named "total".
func (iv *Interval) Total() TxStats { return MergeTx("total", iv.Tx) }

// MergeTx merges several TxStats into one.
func MergeTx(name string, txs []TxStats) TxStats {
	out := newTxStats(name, "")
	for i := range txs {
		out.add(&txs[i])
	}
	return out
}

func (t *TxStats) add(o *TxStats) { t.addInto(o, &bucketBufs{}) }

// bucketBufs are spare bucket lists for one type's merges: a merge writes
// into them and hands back the lists it replaces.
type bucketBufs struct{ lat, svc []bucketCount }

// addInto is add, merging the bucket lists into spare's and leaving t's
// previous lists in spare.
func (t *TxStats) addInto(o *TxStats, spare *bucketBufs) {
	t.Count += o.Count
	t.Errors.Add(&o.Errors)
	t.Examples.Merge(o.Examples)
	t.Retries += o.Retries
	t.Retried += o.Retried
	t.Skipped += o.Skipped
	t.Late += o.Late
	t.Unfinished.add(&o.Unfinished)
	t.Statements = addStmts(t.Statements, o.Statements)
	if o.Latency != nil {
		mergeHist(t.Latency, o.Latency, o.latBuckets)
		t.latBuckets, spare.lat = mergeBucketsInto(spare.lat[:0], t.latBuckets, o.latBuckets), t.latBuckets
	}
	if o.Service != nil {
		mergeHist(t.Service, o.Service, o.svcBuckets)
		t.svcBuckets, spare.svc = mergeBucketsInto(spare.svc[:0], t.svcBuckets, o.svcBuckets), t.svcBuckets
	}
}

// newTxStats returns empty TxStats with empty histograms (whose buckets
// are known: none).
func newTxStats(name, group string) TxStats {
	return TxStats{Name: name, Group: group, Latency: NewHistogram(), Service: NewHistogram(),
		latBuckets: []bucketCount{}, svcBuckets: []bucketCount{}}
}

// LatencyMax is t.Latency.Max() in µs (0 for none), from t's buckets if
// known: hdr's Max walks every bucket (~0.6 M instructions).
func (t *TxStats) LatencyMax() int64 {
	if t.Latency == nil {
		return 0
	}
	_, _, maxV := histStats(t.Latency, t.latBuckets)
	return maxV
}

// EncodeLatency is EncodeHistogram(t.Latency) (an empty histogram's for
// none), from t's buckets if known.
func (t *TxStats) EncodeLatency() (string, error) {
	if t.Latency == nil {
		return EncodeHistogram(NewHistogram())
	}
	return encodeHistogram(t.Latency, t.latBuckets)
}

// MergeHistogram adds from's values to to (to.Merge(from), in proportion
// to from's non-empty buckets).
func MergeHistogram(to, from *hdr.Histogram) { mergeHist(to, from, nil) }

// Failed is the number of failed transactions.
func (t *TxStats) Failed() int64 { return t.Errors.Total() }

// Latency statistics in milliseconds.
type LatencyStats struct {
	Avg    float64 `json:"avg"`
	Stddev float64 `json:"stddev"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	Max    float64 `json:"max"`
}

var statPercentiles = []float64{50, 90, 95, 99, 99.9}

// Stats computes LatencyStats (ms) of a µs histogram. An empty histogram
// gives zeros.
func Stats(h *hdr.Histogram) LatencyStats { return statsOf(h, nil) }

// LatencyStats returns Stats(t.Latency).
func (t *TxStats) LatencyStats() LatencyStats { return statsOf(t.Latency, t.latBuckets) }

// ServiceStats returns Stats(t.Service).
func (t *TxStats) ServiceStats() LatencyStats { return statsOf(t.Service, t.svcBuckets) }

// statsOf is Stats(h), from h's buckets if known.
func statsOf(h *hdr.Histogram, known []bucketCount) LatencyStats {
	if h == nil || h.TotalCount() == 0 {
		return LatencyStats{}
	}
	p := histPercentiles(h, known, statPercentiles)
	mean, stddev, maxV := histStats(h, known)
	ms := func(us int64) float64 { return round3(float64(us) / 1000) }
	return LatencyStats{
		Avg:    round3(mean / 1000),
		Stddev: round3(stddev / 1000),
		P50:    ms(p[0]),
		P90:    ms(p[1]),
		P95:    ms(p[2]),
		P99:    ms(p[3]),
		P999:   ms(p[4]),
		Max:    ms(maxV),
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// EncodeHistogram returns the compressed HdrHistogram V2 encoding of h as
// base64 text ("HISTFAA..."), the form used in hlog files and readable by
// every HDR implementation.
func EncodeHistogram(h *hdr.Histogram) (string, error) { return encodeHistogram(h, nil) }

// encodeHistogram is EncodeHistogram(h), from h's buckets if known.
func encodeHistogram(h *hdr.Histogram, known []bucketCount) (string, error) {
	if s, ok := encodeV2(h, known); ok {
		return s, nil
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase) // already base64
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// DecodeHistogram reverses EncodeHistogram.
func DecodeHistogram(s string) (*hdr.Histogram, error) {
	return hdr.Decode([]byte(s))
}

// intervalJSON is the on-disk form of an Interval: one JSON line per
// interval in a run's intervals.jsonl. Summary statistics are written for
// readers that do not decode histograms; the histograms keep everything.
type intervalJSON struct {
	Seq        int       `json:"seq"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Warmup     bool      `json:"warmup,omitempty"`
	Drain      bool      `json:"drain,omitempty"`
	Connected  int       `json:"connected"`
	TargetRate float64   `json:"target_rate,omitempty"`
	Step       int       `json:"step,omitempty"`
	// LagMS is the mean schedule lag of the interval's committed
	// transactions (mean latency − mean service time): how long they
	// waited for a client. Derived; 0 in a closed loop.
	LagMS float64  `json:"lag_ms,omitempty"`
	Tx    []txJSON `json:"tx"`
}

type txJSON struct {
	Name   string      `json:"name"`
	Group  string      `json:"group,omitempty"`
	Count  int64       `json:"count"`
	Failed int64       `json:"failed"`
	Errors ErrorCounts `json:"errors"`
	// ErrorExamples: the first and last failure of each class, with
	// their text (absent when nothing failed).
	ErrorExamples ErrorExamples `json:"error_examples,omitempty"`
	Retries       int64         `json:"retries"`
	Retried       int64         `json:"retried,omitempty"`
	Skipped       int64         `json:"skipped,omitempty"`
	Late          int64         `json:"late,omitempty"`
	LatencyMS     LatencyStats  `json:"latency_ms"`
	LatencyHist   string        `json:"latency_hist"`
	ServiceHist   string        `json:"service_hist"`
	Statements    []StmtStat    `json:"statements,omitempty"`
	Unfinished    *Unfinished   `json:"unfinished,omitempty"`
}

// MarshalJSON encodes the interval with its histograms.
func (iv Interval) MarshalJSON() ([]byte, error) {
	j := intervalJSON{Seq: iv.Seq, Start: iv.Start.UTC(), End: iv.End.UTC(), Warmup: iv.Warmup, Drain: iv.Drain,
		Connected: iv.Connected, TargetRate: iv.TargetRate, Step: iv.Step, Tx: make([]txJSON, len(iv.Tx))}
	for i := range iv.Tx {
		t := &iv.Tx[i]
		lat, latB := t.Latency, t.latBuckets
		if lat == nil {
			lat, latB = NewHistogram(), nil
		}
		svc, svcB := t.Service, t.svcBuckets
		if svc == nil {
			svc, svcB = NewHistogram(), nil
		}
		le, err := encodeHistogram(lat, latB)
		if err != nil {
			return nil, fmt.Errorf("encode latency histogram: %w", err)
		}
		// In a closed loop the service times are the latencies: their
		// encoding (a zlib stream, whose compressor clears 640 kB of
		// tables first) is made once.
		se := le
		if !sameBuckets(t, latB, svcB) {
			if se, err = encodeHistogram(svc, svcB); err != nil {
				return nil, fmt.Errorf("encode service histogram: %w", err)
			}
		}
		j.Tx[i] = txJSON{Name: t.Name, Group: t.Group, Count: t.Count, Failed: t.Failed(), Errors: t.Errors,
			ErrorExamples: t.Examples, Retries: t.Retries, Retried: t.Retried, Skipped: t.Skipped, Late: t.Late, LatencyMS: statsOf(lat, latB), LatencyHist: le, ServiceHist: se,
			Statements: t.Statements}
		if t.Unfinished.Count() > 0 {
			j.Tx[i].Unfinished = &t.Unfinished
		}
	}
	if iv.TargetRate > 0 {
		j.LagMS = iv.lagMS()
	}
	w := JSONWriter{B: make([]byte, 0, 512)}
	j.writeJSON(&w)
	if w.Err != nil {
		return nil, w.Err
	}
	return w.B, nil
}

// sameBuckets reports whether t's latency and service histograms, whose
// bucket lists are latB and svcB, are known to be equal (so are their
// encodings): both absent, or both lists known and equal.
func sameBuckets(t *TxStats, latB, svcB []bucketCount) bool {
	if t.Latency == nil || t.Service == nil {
		return t.Latency == nil && t.Service == nil
	}
	return latB != nil && svcB != nil && slices.Equal(latB, svcB)
}

// lagMS is the mean latency less the mean service time (ms) of all types
// together (0 without commits), as histStats of iv.Total()'s histograms
// has them: from the types' bucket lists, merged, when all are known
// (not two new histograms per interval), else from iv.Total().
func (iv *Interval) lagMS() float64 {
	lat, svc := []bucketCount{}, []bucketCount{}
	var count int64
	for i := range iv.Tx {
		t := &iv.Tx[i]
		count += t.Count
		if t.Latency != nil {
			lat = mergeBuckets(lat, t.latBuckets)
		}
		if t.Service != nil {
			svc = mergeBuckets(svc, t.svcBuckets)
		}
	}
	if count == 0 {
		return 0
	}
	if lat == nil || svc == nil {
		total := iv.Total()
		l, _, _ := histStats(total.Latency, total.latBuckets)
		s, _, _ := histStats(total.Service, total.svcBuckets)
		return round3((l - s) / 1000)
	}
	return round3((meanOf(lat) - meanOf(svc)) / 1000)
}

// meanOf is histStats' mean of a histogram whose buckets are buckets.
func meanOf(buckets []bucketCount) float64 {
	var n int64
	for _, b := range buckets {
		n += b.count
	}
	if n == 0 {
		return 0
	}
	return bucketsMean(buckets, float64(n))
}

// writeJSON writes j as encoding/json does (TestIntervalJSON).
func (j *intervalJSON) writeJSON(w *JSONWriter) {
	w.Open()
	w.Key("seq")
	w.Int(int64(j.Seq))
	w.Key("start")
	w.Time(j.Start)
	w.Key("end")
	w.Time(j.End)
	if j.Warmup {
		w.Key("warmup")
		w.Bool(true)
	}
	if j.Drain {
		w.Key("drain")
		w.Bool(true)
	}
	w.Key("connected")
	w.Int(int64(j.Connected))
	if j.TargetRate != 0 {
		w.Key("target_rate")
		w.Float(j.TargetRate)
	}
	if j.Step != 0 {
		w.Key("step")
		w.Int(int64(j.Step))
	}
	if j.LagMS != 0 {
		w.Key("lag_ms")
		w.Float(j.LagMS)
	}
	w.Key("tx")
	if j.Tx == nil {
		w.Raw([]byte("null"))
	} else {
		w.OpenArray()
		for i := range j.Tx {
			j.Tx[i].writeJSON(w)
		}
		w.CloseArray()
	}
	w.Close()
}

func (t *txJSON) writeJSON(w *JSONWriter) {
	w.Open()
	w.Key("name")
	w.String(t.Name)
	if t.Group != "" {
		w.Key("group")
		w.String(t.Group)
	}
	w.Key("count")
	w.Int(t.Count)
	w.Key("failed")
	w.Int(t.Failed)
	w.Key("errors")
	w.Errors(&t.Errors)
	if len(t.ErrorExamples) > 0 {
		w.Key("error_examples")
		w.Value(t.ErrorExamples)
	}
	w.Key("retries")
	w.Int(t.Retries)
	for _, f := range []struct {
		k string
		v int64
	}{{"retried", t.Retried}, {"skipped", t.Skipped}, {"late", t.Late}} {
		if f.v != 0 {
			w.Key(f.k)
			w.Int(f.v)
		}
	}
	w.Key("latency_ms")
	w.latency(&t.LatencyMS)
	w.Key("latency_hist")
	w.String(t.LatencyHist)
	w.Key("service_hist")
	w.String(t.ServiceHist)
	if len(t.Statements) > 0 {
		w.Key("statements")
		w.Value(t.Statements)
	}
	if t.Unfinished != nil {
		w.Key("unfinished")
		w.Value(t.Unfinished)
	}
	w.Close()
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var j intervalJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*iv = Interval{Seq: j.Seq, Start: j.Start, End: j.End, Warmup: j.Warmup, Drain: j.Drain, Connected: j.Connected,
		TargetRate: j.TargetRate, Step: j.Step, Tx: make([]TxStats, len(j.Tx))}
	for i, t := range j.Tx {
		lat, err := DecodeHistogram(t.LatencyHist)
		if err != nil {
			return fmt.Errorf("interval %d %s: latency histogram: %w", j.Seq, t.Name, err)
		}
		svc, err := DecodeHistogram(t.ServiceHist)
		if err != nil {
			return fmt.Errorf("interval %d %s: service histogram: %w", j.Seq, t.Name, err)
		}
		iv.Tx[i] = TxStats{Name: t.Name, Group: t.Group, Count: t.Count, Errors: t.Errors, Examples: t.ErrorExamples, Retries: t.Retries, Retried: t.Retried,
			Skipped: t.Skipped, Late: t.Late, Latency: lat, Service: svc, Statements: t.Statements}
		if t.Unfinished != nil {
			iv.Tx[i].Unfinished = *t.Unfinished
		}
	}
	return nil
}
