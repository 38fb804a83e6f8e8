package cli

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestOutJSONLAndCSV streams one run to two jsonl outputs (a file and
// stdout) and a csv file: the two jsonl streams are the same bytes, start
// first and end last, an interval line per interval of the run directory,
// and the csv rows add up to the summary's committed count.
func TestOutJSONLAndCSV(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results, dir := t.TempDir(), t.TempDir()
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	jl, cf := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
	r := mustRun(t, "run", "tpcb", "-S", "-c", "2", "-T", "2s", "--interval", "250ms", "--sample-interval", "1",
		"--dsn", dsn, "--results", results, "--out", "jsonl="+jl, "--out", "csv="+cf, "--out", "jsonl=-")
	if !strings.Contains(r.stderr, "tps = ") {
		t.Errorf("with --out jsonl=- the text summary should go to stderr:\n%s", r.stderr)
	}
	file, err := os.ReadFile(jl)
	if err != nil {
		t.Fatal(err)
	}
	if string(file) != r.stdout {
		t.Errorf("jsonl file and jsonl=- differ:\n%s\n---\n%s", file, r.stdout)
	}
	type line struct {
		Type string          `json:"type"`
		Run  string          `json:"run"`
		Data json.RawMessage `json:"data"`
	}
	var lines []line
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not a JSON line: %v: %s", err, sc.Text())
		}
		lines = append(lines, l)
	}
	if len(lines) < 3 || lines[0].Type != "start" || lines[len(lines)-1].Type != "end" {
		t.Fatalf("want start first and end last, got %d lines", len(lines))
	}
	id := lines[0].Run
	count := map[string]int{}
	for _, l := range lines {
		count[l.Type]++
		if l.Run != id {
			t.Errorf("line of run %q in run %q", l.Run, id)
		}
	}
	stored, err := os.ReadFile(filepath.Join(results, id, "intervals.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(stored), "\n"); count["interval"] != n || n < 4 {
		t.Errorf("%d interval lines, the run directory has %d (want at least 4)", count["interval"], n)
	}
	if count["sample"] == 0 {
		t.Errorf("no sample lines: %v", count)
	}
	var end struct {
		Summary struct {
			Transactions int64 `json:"transactions"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(lines[len(lines)-1].Data, &end); err != nil || end.Summary.Transactions <= 0 {
		t.Fatalf("end line: %v, %s", err, lines[len(lines)-1].Data)
	}

	fh, err := os.Open(cf)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != count["interval"]+1 { // select-only: one type
		t.Fatalf("%d csv rows, want a header and %d", len(rows), count["interval"])
	}
	var committed int64
	for _, row := range rows[1:] {
		if row[0] != id || row[8] != "select-only" {
			t.Errorf("row %v: want run %s, type select-only", row, id)
		}
		n, _ := strconv.ParseInt(row[9], 10, 64)
		committed += n
	}
	if committed != end.Summary.Transactions {
		t.Errorf("csv rows commit %d, the summary %d", committed, end.Summary.Transactions)
	}
}

// TestOutBadInput: a wrong --out is one line and exit 2, before anything
// is recorded.
func TestOutBadInput(t *testing.T) {
	t.Parallel()
	results := t.TempDir()
	dsn := "postgres://pgarena@127.0.0.1:1/none" // never reached
	base := []string{"run", "tpcb", "-T", "1s", "--dsn", dsn, "--results", results}
	for _, c := range []struct {
		out  []string
		want string
	}{
		{[]string{"--out", "influx=http://x"}, `unknown output "influx" (known: csv=FILE, jsonl=FILE|-, postgres=DSN, prometheus[=ADDR])`},
		{[]string{"--out", "jsonl"}, "output jsonl needs an argument: --out jsonl=FILE|-"},
		{[]string{"--out", "csv="}, "output csv needs an argument"},
		{[]string{"--out", "jsonl=-", "--json"}, "stdout is already taken"},
		{[]string{"--out", "jsonl=-", "--out", "jsonl=-"}, "stdout is already taken"},
		{[]string{"--out", "csv=" + filepath.Join(results, "no", "such", "dir.csv")}, "no such file or directory"},
		{[]string{"--out", "prometheus=9469"}, "want host:port"},
		{[]string{"--out", "jsonl=x.jsonl", "--agents", "2"}, "--out does not combine with --agents"},
	} {
		wantUsage(t, pgarena(t, nil, append(base, c.out...)...), c.want)
	}
	noRuns(t, results)
}

// TestOutFailingReportedAtEnd: an output that cannot write (a full disk:
// /dev/full) does not stop or slow the run; it is listed after the summary
// and the run is complete.
func TestOutFailingReportedAtEnd(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	r := mustRun(t, "run", "tpcb", "-S", "-c", "1", "-T", "1s", "--dsn", dsn, "--results", t.TempDir(),
		"--out", "jsonl=/dev/full")
	i := strings.Index(r.stderr, "outputs:\n  output jsonl=/dev/full failed: ")
	if i < 0 || !strings.Contains(r.stderr[i:], "no space left on device") {
		t.Errorf("the failing output should be listed at the end:\n%s", r)
	}
}

// TestOutPrometheusScraped runs Debian's Prometheus server scraping a run's
// --out prometheus and queries the series it stored while the run goes on.
func TestOutPrometheusScraped(t *testing.T) {
	t.Parallel()
	bin, err := osexec.LookPath("prometheus")
	if err != nil {
		if pgtest.Required() {
			t.Fatal("prometheus is not installed (scripts/install-deps.sh --tests installs it)")
		}
		t.Skip("prometheus is not installed (scripts/install-deps.sh --tests installs it)")
	}
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	metricsAddr, promAddr := freeAddr(t), freeAddr(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n"+
		"  - job_name: pgarena\n    static_configs:\n      - targets: ['%s']\n", metricsAddr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := osexec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	promLog := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		done <- pgarenaCtx(t, ctx, nil, "run", "tpcb", "-S", "-c", "2", "-T", "90s", "--dsn", dsn,
			"--results", t.TempDir(), "--out", "prometheus="+metricsAddr)
	}()
	for _, q := range []struct{ query, what string }{
		{`pgarena_transactions_committed_total{type="select-only"} > 0`, "committed transactions"},
		{`pgarena_transaction_latency_seconds_bucket{type="select-only",le="+Inf"} > 0`, "the latency histogram"},
		{`pgarena_transactions_failed_total{type="select-only",class="serialization"} == 0`, "failures by class"},
		{`pgarena_clients_connected == 2`, "clients connected"},
		{`pgarena_target_rate == 0`, "the target rate"},
		{`pgarena_sample{series="pg.connections.total"} > 0`, "server samples"},
	} {
		if err := awaitSeries(ctx, promAddr, q.query, done); err != nil {
			cancel()
			t.Fatalf("Prometheus did not store %s (%s): %v\n--- prometheus log ---\n%s", q.what, q.query, err, promLog())
		}
	}
	cancel()
	r := <-done
	if r.code != ExitInterrupted {
		t.Errorf("run: want exit %d after the interrupt:\n%s", ExitInterrupted, r)
	}
	if c, err := net.DialTimeout("tcp", metricsAddr, time.Second); err == nil {
		c.Close()
		t.Errorf("metrics are still served at %s after the run", metricsAddr)
	}
}

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// awaitSeries polls Prometheus's query API until query returns a series,
// for at most 60 s; a run that ends first is an error.
func awaitSeries(ctx context.Context, promAddr, query string, done <-chan result) error {
	deadline := time.Now().Add(60 * time.Second)
	client := &http.Client{Timeout: 5 * time.Second}
	var last string
	for time.Now().Before(deadline) {
		resp, err := client.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(query))
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var r struct {
				Status string `json:"status"`
				Data   struct {
					Result []json.RawMessage `json:"result"`
				} `json:"data"`
			}
			if json.Unmarshal(body, &r) == nil && r.Status == "success" && len(r.Data.Result) > 0 {
				return nil
			}
			last = string(body)
		} else {
			last = err.Error()
		}
		select {
		case r := <-done:
			return fmt.Errorf("the run ended first:\n%s", r)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("no series within 60 s; last answer: %s", last)
}
