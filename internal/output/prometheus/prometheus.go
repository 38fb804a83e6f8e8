// Package prometheus is the output `--out prometheus[=ADDR]`: it serves
// /metrics in Prometheus's text format while the run goes on, with the
// Prometheus Go client library, for the dashboards a team already watches.
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
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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

func init() {
	output.Register(output.Kind{Name: "prometheus", Usage: "prometheus[=ADDR]",
		Help: "serve /metrics during the run (default " + DefaultAddr + "; not loopback: a token)",
		New:  New})
}

// LatencyBuckets are the histogram's upper bounds, in seconds: 50 µs to
// 30 s, each about 1.6 times the one before.
var LatencyBuckets = sync.OnceValue(func() []float64 { return prometheus.ExponentialBucketsRange(50e-6, 30, 30) })

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
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(o); err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
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

// descs are the series' descriptions.
var descs = sync.OnceValue(func() *descSet {
	return &descSet{
		info:      prometheus.NewDesc("pgarena_run_info", "The run being measured (value 1).", []string{"run", "workload", "label"}, nil),
		committed: prometheus.NewDesc("pgarena_transactions_committed_total", "Committed transactions.", []string{"run", "type"}, nil),
		failed:    prometheus.NewDesc("pgarena_transactions_failed_total", "Failed transactions, by error class.", []string{"run", "type", "class"}, nil),
		retried:   prometheus.NewDesc("pgarena_transactions_retried_total", "Retries of transactions (serialization failures and deadlocks).", []string{"run", "type"}, nil),
		latency:   prometheus.NewDesc("pgarena_transaction_latency_seconds", "Latency of committed transactions: end minus intended start.", []string{"run", "type"}, nil),
		rate:      prometheus.NewDesc("pgarena_target_rate", "Scheduled arrival rate of an open loop, transactions per second (0: closed loop).", []string{"run"}, nil),
		conns:     prometheus.NewDesc("pgarena_clients_connected", "Clients holding an open connection.", []string{"run"}, nil),
		sample:    prometheus.NewDesc("pgarena_sample", "Latest value of a sampled server, pooler or host series.", []string{"run", "source", "series"}, nil),
	}
})

type descSet struct{ info, committed, failed, retried, latency, rate, conns, sample *prometheus.Desc }

// Describe describes every series (prometheus.Collector).
func (o *Output) Describe(ch chan<- *prometheus.Desc) {
	ds := descs()
	for _, d := range []*prometheus.Desc{ds.info, ds.committed, ds.failed, ds.retried, ds.latency, ds.rate, ds.conns, ds.sample} {
		ch <- d
	}
}

// Collect sends the metrics as of the last interval (prometheus.Collector).
func (o *Output) Collect(ch chan<- prometheus.Metric) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.run.id == "" {
		return
	}
	id, d := o.run.id, descs()
	ch <- prometheus.MustNewConstMetric(d.info, prometheus.GaugeValue, 1, id, o.run.workload, o.run.label)
	ch <- prometheus.MustNewConstMetric(d.rate, prometheus.GaugeValue, o.rate, id)
	ch <- prometheus.MustNewConstMetric(d.conns, prometheus.GaugeValue, float64(o.conns), id)
	for _, name := range o.order {
		ts := o.types[name]
		ch <- prometheus.MustNewConstMetric(d.committed, prometheus.CounterValue, float64(ts.committed), id, name)
		ch <- prometheus.MustNewConstMetric(d.retried, prometheus.CounterValue, float64(ts.retried), id, name)
		for c := pgerr.ClassNone + 1; c < pgerr.ErrorClass(pgerr.NumClasses); c++ {
			ch <- prometheus.MustNewConstMetric(d.failed, prometheus.CounterValue, float64(ts.failed[c]), id, name, c.String())
		}
		cum, acc := make(map[float64]uint64, len(LatencyBuckets())), uint64(0)
		for i, le := range LatencyBuckets() {
			acc += ts.buckets[i]
			cum[le] = acc
		}
		ch <- prometheus.MustNewConstHistogram(d.latency, ts.count, ts.sum, cum, id, name)
	}
	for k, v := range o.samples {
		ch <- prometheus.MustNewConstMetric(d.sample, prometheus.GaugeValue, v, id, k.source, k.series)
	}
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
