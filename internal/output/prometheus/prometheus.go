// Package prometheus is the output `--out prometheus[=ADDR]`: it serves
// /metrics in Prometheus's text format while the run goes on, with the
// text exposition format 0.0.4 written by hand (the Prometheus client
// library's package initialisation cost every command ~1 M instructions
// and 3.5 MB of binary), for the dashboards a team already watches.
//
// Series, each labelled with the run's id (run):
//
//	pgarena_run_info{workload,label}                     1
//	pgarena_transactions_committed_total{type}           counter
//	pgarena_transactions_failed_total{type,class}        counter, by error class
//	pgarena_transactions_retried_total{type}             counter
//	pgarena_transaction_latency_seconds{type}            histogram (end − intended start, committed)
//	pgarena_target_rate                                  gauge, tx/s of an open loop (0: closed loop)
//	pgarena_clients_connected                            gauge
//	pgarena_sample{source,series}                        gauge, the latest server, pooler and host samples
//
// Counters and the histogram grow as each interval ends (the run's tick),
// warm-up included. It listens on 127.0.0.1:9469 by default; an address
// that is not loopback needs a token, as `pgarena serve` does: taken from
// PGARENA_PROMETHEUS_TOKEN or generated and printed once, and sent by
// Prometheus as a bearer token (scrape config `authorization: {credentials: ...}`).
// Without a token only loopback Host names are answered.
package prometheus

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/session"
)

// DefaultAddr is where metrics are served without =ADDR.
const DefaultAddr = "127.0.0.1:9469"

// TokenEnv names the variable that fixes the token of a non-loopback
// address.
const TokenEnv = "PGARENA_PROMETHEUS_TOKEN"

// Kind describes prometheus to the registry (internal/output/all registers it).
var Kind = output.Kind{Name: "prometheus", Usage: "prometheus[=ADDR]",
	Help: "serve /metrics during the run (default " + DefaultAddr + "; not loopback: a token)",
	New:  New}

// LatencyBuckets are the histogram's upper bounds, in seconds: 50 µs to
// 30 s, each about 1.6 times the one before (as client_golang's
// ExponentialBucketsRange(50e-6, 30, 30) computes them).
func LatencyBuckets() []float64 { return latencyBuckets.Get() }

var latencyBuckets = lazy.Value[[]float64]{New: buildLatencyBuckets}

func buildLatencyBuckets() []float64 {
	const lo, hi, n = 50e-6, 30, 30
	growth := math.Pow(hi/lo, 1.0/(n-1))
	b := make([]float64, n)
	for i := range b {
		b[i] = lo * math.Pow(growth, float64(i))
	}
	return b
}

// Output serves the run's metrics.
type Output struct {
	addr  string
	token string
	srv   *http.Server
	done  chan struct{}

	mu      sync.Mutex
	run     runInfo
	types   map[string]*typeStats
	order   []string // types, first seen first
	rate    float64
	conns   int
	samples map[sampleKey]float64
}

type runInfo struct{ id, workload, label string }

type sampleKey struct{ source, series string }

type typeStats struct {
	committed, retried int64
	failed             [pgerr.NumClasses]int64
	buckets            []uint64 // per LatencyBuckets bound, not cumulative
	sum                float64  // seconds
	count              uint64
}

// New listens on p.Arg (DefaultAddr when empty) and serves /metrics.
func New(p output.Params) (session.Output, error) {
	addr := p.Arg
	if addr == "" {
		addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%q: want host:port, e.g. %s", addr, DefaultAddr)
	}
	o := &Output{types: map[string]*typeStats{}, samples: map[sampleKey]float64{}, done: make(chan struct{})}
	if !isLoopback(host) {
		if o.token = p.Env(TokenEnv); o.token == "" {
			b := make([]byte, 16)
			if _, err := rand.Read(b); err != nil {
				return nil, err
			}
			o.token = hex.EncodeToString(b)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	o.addr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", o.serveMetrics)
	o.srv = &http.Server{Handler: o.guard(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(o.done)
		_ = o.srv.Serve(ln)
	}()
	if o.token != "" {
		p.Notef("prometheus metrics at http://%s/metrics (bearer token %s)", o.addr, o.token)
	} else {
		p.Notef("prometheus metrics at http://%s/metrics", o.addr)
	}
	return o, nil
}

func (o *Output) String() string { return "prometheus=" + o.addr }

// BorrowsRecords (a session.Borrower): Write adds an interval into its own counts and keeps nothing of it.
func (o *Output) BorrowsRecords() {}

// Addr is the address metrics are served on.
func (o *Output) Addr() string { return o.addr }

// guard applies the token rule of `pgarena serve`.
func (o *Output) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.token == "" {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if !isLoopback(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")) {
				http.Error(w, "without a token, pgarena's metrics answer only localhost, 127.0.0.1 and [::1]", http.StatusMisdirectedRequest)
				return
			}
		} else {
			tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if subtle.ConstantTimeCompare([]byte(tok), []byte(o.token)) != 1 {
				http.Error(w, "a bearer token is required (the one pgarena printed, or $"+TokenEnv+")", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// isLoopback reports whether host (a name or an address) is this machine
// by a loopback name or address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Write folds a record into the metrics.
func (o *Output) Write(r session.Record) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case r.Start != nil:
		o.run = runInfo{r.Start.ID, r.Start.Spec.Workload, r.Start.Spec.Label}
	case r.Interval != nil:
		o.rate, o.conns = r.Interval.TargetRate, r.Interval.Connected
		for i := range r.Interval.Tx {
			o.add(&r.Interval.Tx[i])
		}
	case r.Samples != nil:
		for _, s := range r.Samples {
			for k, v := range s.Values {
				o.samples[sampleKey{s.Source, k}] = v
			}
		}
	}
	return nil
}

func (o *Output) add(t *metrics.TxStats) {
	ts := o.types[t.Name]
	if ts == nil {
		ts = &typeStats{buckets: make([]uint64, len(LatencyBuckets()))}
		o.types[t.Name] = ts
		o.order = append(o.order, t.Name)
	}
	ts.committed += t.Count
	ts.retried += t.Retries
	for c := range ts.failed {
		ts.failed[c] += t.Errors[c]
	}
	h := t.Latency
	if h == nil || h.TotalCount() == 0 {
		return
	}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		// An HDR bucket's values are all within its bounds, 3 significant
		// digits apart: its upper bound places it.
		sec := float64(b.To) / 1e6
		i, _ := boundIndex(sec)
		if i < len(ts.buckets) {
			ts.buckets[i] += uint64(b.Count)
		}
		ts.count += uint64(b.Count)
	}
	ts.sum += h.Mean() * float64(h.TotalCount()) / 1e6
}

// boundIndex is the first bucket whose upper bound is at least sec
// (len(LatencyBuckets()): only +Inf).
func boundIndex(sec float64) (int, bool) {
	for i, le := range LatencyBuckets() {
		if sec <= le {
			return i, true
		}
	}
	return len(LatencyBuckets()), false
}

// contentType is the text exposition format's.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

func (o *Output) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(o.exposition())
}

// family is one metric family: its samples' lines are sorted as
// client_golang sorts them (by label values), labels by name.
type family struct {
	name, help, typ string
	lines           []string
}

// exposition renders the metrics as of the last interval, families by
// name; a family without samples is left out.
func (o *Output) exposition() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.run.id == "" {
		return nil
	}
	id := o.run.id
	info := family{name: "pgarena_run_info", help: "The run being measured (value 1).", typ: "gauge"}
	info.add("", 1, "label", o.run.label, "run", id, "workload", o.run.workload)
	rate := family{name: "pgarena_target_rate", help: "Scheduled arrival rate of an open loop, transactions per second (0: closed loop).", typ: "gauge"}
	rate.add("", o.rate, "run", id)
	conns := family{name: "pgarena_clients_connected", help: "Clients holding an open connection.", typ: "gauge"}
	conns.add("", float64(o.conns), "run", id)
	committed := family{name: "pgarena_transactions_committed_total", help: "Committed transactions.", typ: "counter"}
	retried := family{name: "pgarena_transactions_retried_total", help: "Retries of transactions (serialization failures and deadlocks).", typ: "counter"}
	failed := family{name: "pgarena_transactions_failed_total", help: "Failed transactions, by error class.", typ: "counter"}
	latency := family{name: "pgarena_transaction_latency_seconds", help: "Latency of committed transactions: end minus intended start.", typ: "histogram"}
	for _, name := range o.order {
		ts := o.types[name]
		committed.add("", float64(ts.committed), "run", id, "type", name)
		retried.add("", float64(ts.retried), "run", id, "type", name)
		for c := pgerr.ClassNone + 1; c < pgerr.ErrorClass(pgerr.NumClasses); c++ {
			failed.add("", float64(ts.failed[c]), "class", c.String(), "run", id, "type", name)
		}
		// One line group per type: buckets (cumulative, then +Inf), sum, count.
		var b strings.Builder
		acc := uint64(0)
		for i, le := range LatencyBuckets() {
			acc += ts.buckets[i]
			b.WriteString(sample(latency.name+"_bucket", float64(acc), "run", id, "type", name, "le", formatFloat(le)))
		}
		b.WriteString(sample(latency.name+"_bucket", float64(ts.count), "run", id, "type", name, "le", "+Inf"))
		b.WriteString(sample(latency.name+"_sum", ts.sum, "run", id, "type", name))
		b.WriteString(sample(latency.name+"_count", float64(ts.count), "run", id, "type", name))
		latency.lines = append(latency.lines, b.String())
	}
	sampled := family{name: "pgarena_sample", help: "Latest value of a sampled server, pooler or host series.", typ: "gauge"}
	for k, v := range o.samples {
		sampled.add("", v, "run", id, "series", k.series, "source", k.source)
	}
	fams := []family{info, rate, conns, committed, retried, failed, latency, sampled}
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.name, b.name) })
	var out strings.Builder
	for _, f := range fams {
		if len(f.lines) == 0 {
			continue
		}
		slices.Sort(f.lines)
		out.WriteString("# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.typ + "\n")
		for _, l := range f.lines {
			out.WriteString(l)
		}
	}
	return []byte(out.String())
}

// add appends one sample of the family (suffix: "_bucket" and the like);
// labels are name, value pairs sorted by name.
func (f *family) add(suffix string, v float64, labels ...string) {
	f.lines = append(f.lines, sample(f.name+suffix, v, labels...))
}

// sample is one exposition line: name{label="value",...} value.
func sample(name string, v float64, labels ...string) string {
	var b strings.Builder
	b.WriteString(name)
	for i := 0; i < len(labels); i += 2 {
		if i == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(labels[i] + `="` + labelEscaper.Get().Replace(labels[i+1]) + `"`)
	}
	if len(labels) > 0 {
		b.WriteByte('}')
	}
	b.WriteString(" " + formatFloat(v) + "\n")
	return b.String()
}

// labelEscaper escapes a label value: backslash, double quote, line feed.
var labelEscaper = lazy.Value[*strings.Replacer]{New: func() *strings.Replacer { return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`) }}

// formatFloat writes a value as the exposition format does.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Close stops serving, waiting at most 2 s for scrapes in flight.
func (o *Output) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := o.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = o.srv.Close()
	}
	<-o.done
	return err
}
