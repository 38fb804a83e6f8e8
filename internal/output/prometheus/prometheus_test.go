package prometheus

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/store"
)

func init() { output.Register(Kind) }

func get(t *testing.T, url, host, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTokenRule: loopback without a token answers only loopback Host
// names; any other address needs the bearer token (as pgarena serve).
func TestTokenRule(t *testing.T) {
	env := func(k string) string {
		if k == TokenEnv {
			return "s3cret"
		}
		return ""
	}
	var notes []string
	notef := func(f string, a ...any) { notes = append(notes, f) }

	lo, err := output.New("prometheus=127.0.0.1:0", output.Params{Env: env, Notef: notef})
	if err != nil {
		t.Fatal(err)
	}
	defer lo.(io.Closer).Close()
	url := "http://" + lo.(*Output).Addr() + "/metrics"
	if code, body := get(t, url, "", ""); code != http.StatusOK {
		t.Errorf("loopback without a token: %d %s", code, body)
	}
	if code, _ := get(t, url, "rebound.example:80", ""); code != http.StatusMisdirectedRequest {
		t.Errorf("loopback, foreign Host: %d, want %d", code, http.StatusMisdirectedRequest)
	}

	all, err := output.New("prometheus=0.0.0.0:0", output.Params{Env: env, Notef: notef})
	if err != nil {
		t.Fatal(err)
	}
	defer all.(io.Closer).Close()
	_, port, _ := net.SplitHostPort(all.(*Output).Addr())
	url = "http://127.0.0.1:" + port + "/metrics"
	if code, _ := get(t, url, "", ""); code != http.StatusUnauthorized {
		t.Errorf("0.0.0.0 without a token: %d, want 401", code)
	}
	if code, _ := get(t, url, "", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("0.0.0.0 with a wrong token: %d, want 401", code)
	}
	if code, body := get(t, url, "", "s3cret"); code != http.StatusOK {
		t.Errorf("0.0.0.0 with the token: %d %s", code, body)
	}
	if _, err := output.New("prometheus=nohostport", output.Params{Env: env}); err == nil || !strings.Contains(err.Error(), "host:port") {
		t.Errorf("a bad address: %v", err)
	}
}

// TestSeries: an interval and samples become the documented series, the
// HDR histogram's counts falling in the right buckets.
func TestSeries(t *testing.T) {
	o, err := output.New("prometheus=127.0.0.1:0", output.Params{Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer o.(io.Closer).Close()
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for range 90 {
		_ = h.RecordValue(200) // 200 µs
	}
	for range 10 {
		_ = h.RecordValue(40_000) // 40 ms
	}
	tx := metrics.TxStats{Name: "select-only", Count: 100, Retries: 2, Latency: h}
	tx.Errors[pgerr.ClassSerialization] = 3
	recs := []session.Record{
		{Start: &session.RunStart{ID: "20261126-run", Spec: store.RunSpec{Workload: "tpcb", Label: "t"}}},
		{Interval: &metrics.Interval{Seq: 1, Connected: 4, TargetRate: 500, Tx: []metrics.TxStats{tx}}},
		{Samples: []store.Sample{{Source: "server", Values: map[string]float64{"pg.active": 3}}}},
	}
	for _, r := range recs {
		if err := o.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	_, body := get(t, "http://"+o.(*Output).Addr()+"/metrics", "", "")
	// Prometheus's own parser reads the hand-written exposition.
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("expfmt does not parse /metrics: %v\n%s", err, body)
	}
	if h := fams["pgarena_transaction_latency_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleCount() != 100 || len(h.GetBucket()) != len(LatencyBuckets())+1 { // and +Inf
		t.Errorf("histogram: count %d, %d buckets", h.GetSampleCount(), len(h.GetBucket()))
	}
	if len(fams) != 8 {
		t.Errorf("%d families, want 8", len(fams))
	}
	for _, want := range []string{
		`pgarena_run_info{label="t",run="20261126-run",workload="tpcb"} 1`,
		`pgarena_transactions_committed_total{run="20261126-run",type="select-only"} 100`,
		`pgarena_transactions_failed_total{class="serialization",run="20261126-run",type="select-only"} 3`,
		`pgarena_transactions_retried_total{run="20261126-run",type="select-only"} 2`,
		`pgarena_transaction_latency_seconds_count{run="20261126-run",type="select-only"} 100`,
		`pgarena_target_rate{run="20261126-run"} 500`,
		`pgarena_clients_connected{run="20261126-run"} 4`,
		`pgarena_sample{run="20261126-run",series="pg.active",source="server"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// 90 at 200 µs are at or below every bound from 200 µs up; all 100 at 50 ms.
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "pgarena_transaction_latency_seconds_bucket") {
			continue
		}
		le := line[strings.Index(line, `le="`)+4:]
		le = le[:strings.Index(le, `"`)]
		n := line[strings.LastIndex(line, " ")+1:]
		var bound float64
		if le != "+Inf" {
			bound = mustFloat(t, le)
		}
		want := "0"
		switch {
		case le == "+Inf" || bound >= 0.0401:
			want = "100"
		case bound >= 0.0002005 && bound < 0.0399:
			want = "90"
		case bound < 0.0001995:
			want = "0"
		default:
			continue // a bound within HDR's precision of a value
		}
		if n != want {
			t.Errorf("bucket le=%s holds %s, want %s", le, n, want)
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		t.Fatal(err)
	}
	return f
}
