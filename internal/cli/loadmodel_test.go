package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestLoadModelBadInput: malformed load models are refused before anything
// connects, naming the offending token and what was expected.
func TestLoadModelBadInput(t *testing.T) {
	results := t.TempDir()
	dsn := "host=/nonexistent-socket-dir dbname=x" // never reached: validation comes first
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"short line", []string{"--schedule", "line(1,200)"}, []string{"line(1,200)", "line needs (from, to, duration)"}},
		{"unknown segment", []string{"--schedule", "ramp(1,2,3s)"}, []string{`unknown segment "ramp"`}},
		{"bad autostop", []string{"--autostop", "errors>>5 for 1s"}, []string{"errors>>5 for 1s", "expected METRIC OP VALUE for DURATION"}},
		{"unknown autostop metric", []string{"--autostop", "cpu>90 for 10s"}, []string{`unknown metric "cpu"`}},
		{"zero in sweep", []string{"-c", "1,0,4"}, []string{"clients must be at least 1 (got 0)"}},
		{"negative rate", []string{"-R", "-5"}, []string{"rate must be positive"}},
		{"rate and schedule", []string{"-R", "10", "--schedule", "const(10,1s)"}, []string{"either -R or --schedule"}},
		{"schedule with -t", []string{"--schedule", "const(100,10s)", "-t", "10"}, []string{"not -t"}},
		{"unknown arrival", []string{"-R", "10", "--arrival", "zipf"}, []string{"--arrival", "poisson or uniform"}},
		{"latency limit in closed loop", []string{"-L", "50"}, []string{"--latency-limit applies to open-loop runs"}},
		{"two sweeps", []string{"-c", "1,2", "-R", "10,20"}, []string{"sweep either clients or rates"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "tpcb", "--dsn", dsn, "--results", results}, c.args...)
			wantUsage(t, pgarena(t, nil, args...), c.want...)
		})
	}
	noRuns(t, results)
}

// TestSweepHasStepSummaries: -c 1,2 runs two steps, each summarised.
func TestSweepHasStepSummaries(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	r := mustRun(t, "run", "tpcb", "-S", "-c", "1,2", "-T", "1s", "--interval", "200ms", "-P", "0",
		"--dsn", dsn, "--json", "--results", t.TempDir())
	m := summaryJSON(t, r.stdout)
	steps, _ := m["steps"].([]any)
	if len(steps) != 2 {
		t.Fatalf("steps %v\n%s", m["steps"], r)
	}
	var total float64
	for i, s := range steps {
		st := s.(map[string]any)
		if int(st["clients"].(float64)) != i+1 || st["transactions"].(float64) <= 0 || st["status"] != "complete" {
			t.Errorf("step %d: %v", i+1, st)
		}
		total += st["transactions"].(float64)
	}
	if total != num(t, m, "transactions") {
		t.Errorf("steps add up to %v transactions, the run says %v", total, m["transactions"])
	}
	if !strings.Contains(r.stderr, "sweep:") || !strings.Contains(r.stderr, "step 2/2: 2 clients") {
		t.Errorf("sweep table or step headers missing:\n%s", r.stderr)
	}
}

// TestAutostopOnConnectionStorm: more clients than the server takes, each
// connecting per transaction (-C: a run whose first connections are
// refused stops before measuring, see TestTooManyClients); the rule on
// too_many_connections stops the run early and cleanly (exit 3), with
// complete results and the reason recorded.
func TestAutostopOnConnectionStorm(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t, map[string]string{"max_connections": "10", "superuser_reserved_connections": "0"})
	dsn := c.DSN("postgres")
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn, "--load-workers", "1")
	results := t.TempDir()
	r := pgarena(t, nil, "run", "tpcb", "-S", "-C", "-c", "16", "-T", "60s", "--interval", "200ms", "-P", "0",
		"--sample-interval", "0", "--autostop", "errors.too_many_connections>1/s for 1s",
		"--dsn", dsn, "--json", "--results", results)
	if r.code != ExitAutostop {
		t.Fatalf("exit %d, want %d\n%s", r.code, ExitAutostop, r)
	}
	if r.elapsed > 30*time.Second {
		t.Fatalf("autostop took %s", r.elapsed)
	}
	m := summaryJSON(t, r.stdout)
	if str(t, m, "status") != "autostopped" || !strings.Contains(str(t, m, "stop_reason"), "too_many_connections>1/s for 1s") {
		t.Errorf("status %v, stop_reason %v", m["status"], m["stop_reason"])
	}
	errs, _ := m["errors"].(map[string]any)
	if errs["too_many_connections"] == nil || num(t, m, "transactions") <= 0 {
		t.Errorf("errors %v, transactions %v: the storm or the work is missing", errs, m["transactions"])
	}
	show := summaryJSON(t, mustRun(t, "show", "last", "--json", "--results", results).stdout)
	if show["status"] != "autostopped" || show["transactions"] != m["transactions"] {
		t.Errorf("show last disagrees with the run: %v vs %v", show, m)
	}
}

// TestOpenLoopSeesStall is the coordinated-omission check against a real
// server: a lock blocks every select for 2 s in the middle of an open-loop
// run. Transactions that arrived during the stall must show it in their
// latency (they waited), while the service time of most does not.
func TestOpenLoopSeesStall(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	locker := connect(t, dsn)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		ctx := context.Background()
		if _, err := locker.Exec(ctx, "begin; lock table pgbench_accounts in access exclusive mode"); err != nil {
			t.Errorf("lock: %v", err)
			return
		}
		time.Sleep(2 * time.Second)
		if _, err := locker.Exec(ctx, "commit"); err != nil {
			t.Errorf("unlock: %v", err)
		}
	}()
	results := t.TempDir()
	r := mustRun(t, "run", "tpcb", "-S", "-R", "200", "--arrival", "uniform", "-c", "8", "-T", "5s",
		"--interval", "200ms", "-P", "0", "--dsn", dsn, "--json", "--results", results)
	// The stall shows per interval as schedule lag.
	lines, err := filepath.Glob(filepath.Join(results, "*", "intervals.jsonl"))
	if err != nil || len(lines) != 1 {
		t.Fatalf("intervals file: %v %v", lines, err)
	}
	raw, err := os.ReadFile(lines[0])
	if err != nil {
		t.Fatal(err)
	}
	maxLag := 0.0
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var iv struct {
			LagMS float64 `json:"lag_ms"`
		}
		if err := json.Unmarshal([]byte(l), &iv); err != nil {
			t.Fatal(err)
		}
		maxLag = max(maxLag, iv.LagMS)
	}
	if maxLag < 300 {
		t.Errorf("largest per-interval schedule lag %v ms: the stall does not show", maxLag)
	}
	m := summaryJSON(t, r.stdout)
	lat, _ := m["latency_ms"].(map[string]any)
	svc, _ := m["service_ms"].(map[string]any)
	t.Logf("latency %v\nservice %v", lat, svc)
	if lat["max"].(float64) < 1500 || lat["p90"].(float64) < 300 {
		t.Errorf("latency does not show the 2 s stall: %v", lat)
	}
	// Once started, most transactions ran fast: the stall is in the
	// latency (waiting for a client), not in the service time. (A ratio,
	// not an absolute bound, so a busy test machine does not matter.)
	if svc["p90"].(float64)*3 > lat["p90"].(float64) {
		t.Errorf("service time p90 %v ms vs latency p90 %v ms: the wait was not separated from the work", svc["p90"], lat["p90"])
	}
	if tr := num(t, m, "target_rate"); tr < 190 || tr > 210 {
		t.Errorf("target rate %v, want 200", tr)
	}
}

// TestAutostopOnSampledSeries: a rule on a series of the samplers stops
// the run (connections are at least the clients for the whole run).
func TestAutostopOnSampledSeries(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	r := pgarena(t, nil, "run", "tpcb", "-S", "-c", "2", "-T", "60s", "--interval", "250ms", "-P", "0",
		"--sample-interval", "250ms", "--autostop", "pg.connections.total>=2 for 1s",
		"--dsn", dsn, "--json", "--results", t.TempDir())
	if r.code != ExitAutostop || r.elapsed > 30*time.Second {
		t.Fatalf("exit %d after %s, want %d soon\n%s", r.code, r.elapsed, ExitAutostop, r)
	}
	if m := summaryJSON(t, r.stdout); !strings.Contains(str(t, m, "stop_reason"), "pg.connections.total>=2 for 1s") {
		t.Errorf("stop_reason %v", m["stop_reason"])
	}
	wantUsage(t, pgarena(t, nil, "run", "tpcb", "--dsn", dsn, "--sample-interval", "0",
		"--autostop", "pg.connections.total>2 for 1s"), "needs --sample-interval")
}

// TestTPCCTerminalsPerWarehouse: home-warehouse mode refuses more than 10
// clients per warehouse before anything starts.
func TestTPCCTerminalsPerWarehouse(t *testing.T) {
	results := t.TempDir()
	r := pgarena(t, nil, "run", "tpcc", "--warehouses", "1", "-c", "11", "-T", "1s", "--results", results)
	wantUsage(t, r, "11 clients for 1 warehouse(s)", "--all-warehouses")
	noRuns(t, results)
}
