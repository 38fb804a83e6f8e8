package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/workload"
)

// sleepWorkload is a test-only workload whose capacity is known: each
// transaction is SELECT pg_sleep(sleepSeconds), so c clients serve at most
// c/sleepSeconds transactions per second. find-max must find that limit.
type sleepWorkload struct{}

const sleepSeconds = 0.1

func init() {
	workload.Register(workload.Meta{Name: "zz-sleep", Description: "test only: SELECT pg_sleep(0.1)",
		New: func() workload.Workload { return sleepWorkload{} }})
}

func (sleepWorkload) Meta() workload.Meta {
	return workload.Meta{Name: "zz-sleep", Description: "test only: SELECT pg_sleep(0.1)"}
}
func (sleepWorkload) Validate() error                           { return nil }
func (sleepWorkload) Tables() []workload.Table                  { return nil }
func (sleepWorkload) TxTypes() []string                         { return []string{"sleep"} }
func (sleepWorkload) NewWorker(int, *rand.Rand) workload.Worker { return sleepWorker{} }

type sleepWorker struct{}

func (sleepWorker) Next() workload.TxType { return 0 }
func (sleepWorker) Do(ctx context.Context, conn *pgx.Conn, _ workload.TxType) error {
	_, err := conn.Exec(ctx, "SELECT pg_sleep(0.1)")
	return err
}

// sixCells is a plan of 6 cells: 3 client counts x 2 protocols, 2 s each.
const sixCells = `name: six
targets:
  - name: db
    dsn: ${PLAN_TEST_DSN}
    init: once
    between: [checkpoint]
defaults:
  time: 2s
  flags:
    interval: 200ms
    progress: 0
    sample-interval: 0
workloads:
  - name: tpcb
    flags:
      scale: 1
matrix:
  clients: [1, 2, 3]
  protocol: [simple, prepared]
`

// TestPlanResumesAfterKill: the plan runner is killed with SIGKILL during
// cell 3; plan run again runs cells 3 to 6 only, and the export has one
// row per cell.
func TestPlanResumesAfterKill(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	file, results := filepath.Join(dir, "six.yaml"), filepath.Join(dir, "results")
	if err := os.WriteFile(file, []byte(sixCells), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(cleanEnv(), "PLAN_TEST_DSN="+dsn)
	cmd := osexec.Command(os.Args[0], "plan", "run", file, "--results", results)
	cmd.Env = append(env, cliMainEnv+"=1")
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	third := waitCellRunning(t, results, "tpcb/clients=2/protocol=simple", 60*time.Second)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waited = true
	before := planRuns(t, results)
	if len(before) != 3 {
		t.Fatalf("%d runs before the kill, want 3 (2 done, 1 interrupted):\n%s", len(before), errb.String())
	}

	r := pgarena(t, env, "plan", "run", file, "--results", results)
	if r.code != 0 {
		t.Fatalf("plan run after the kill:\n%s", r)
	}
	if !strings.Contains(r.stdout, "ran 4 cells (0 with errors), skipped 2; 6/6 done") {
		t.Errorf("plan run after the kill did not run cells 3-6 only:\n%s", r)
	}
	after := planRuns(t, results)
	if len(after) != 7 {
		t.Errorf("%d runs after resuming, want 7 (6 cells and the interrupted one)", len(after))
	}
	for id, ri := range before {
		if a := after[id]; a.Status != ri.Status && id != third {
			t.Errorf("run %s changed: %s -> %s", id, ri.Status, a.Status)
		}
	}
	if after[third].Status != "interrupted" {
		t.Errorf("the killed cell's run reads as %q, want interrupted", after[third].Status)
	}
	checkPlanExport(t, env, file, results)
}

// waitCellRunning waits until the run of the cell named name has recorded
// a few intervals, and returns its id.
func waitCellRunning(t *testing.T, results, name string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for id, ri := range planRuns(t, results) {
			if strings.HasSuffix(ri.CellName, name) && ri.Status == "running" {
				b, _ := os.ReadFile(filepath.Join(results, id, store.IntervalsFile))
				if bytes.Count(b, []byte("\n")) >= 2 {
					return id
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("cell %s did not start running within %s", name, timeout)
	return ""
}

func planRuns(t *testing.T, results string) map[string]store.RunInfo {
	t.Helper()
	runs, err := store.OpenReadOnly(results).List()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.RunInfo{}
	for _, r := range runs {
		if r.Plan != "" {
			out[r.ID] = r
		}
	}
	return out
}

func checkPlanExport(t *testing.T, env []string, file, results string) {
	t.Helper()
	r := pgarena(t, env, "plan", "export", file, "--results", results, "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if r.code != 0 || err != nil {
		t.Fatalf("plan export: %v\n%s", err, r)
	}
	if len(rows) != 1+6 {
		t.Fatalf("export has %d rows, want a header and 6:\n%s", len(rows), r.stdout)
	}
	for _, row := range rows[1:] {
		if row[9] != "done" || row[11] != "complete" {
			t.Errorf("export row not done and complete: %v", row)
		}
	}
	s := pgarena(t, env, "plan", "status", file, "--results", results)
	if !strings.Contains(s.stdout, "6/6 done") || !strings.Contains(s.stdout, "2 attempts") {
		t.Errorf("plan status:\n%s", s)
	}
	html := filepath.Join(filepath.Dir(file), "six.html")
	if h := pgarena(t, env, "plan", "report", file, "--results", results, "-o", html); h.code != 0 {
		t.Errorf("plan report:\n%s", h)
	}
}

// TestPlanValidateNamesTheLine: a misspelled key and a bad value are bad
// input naming file:line and the key.
func TestPlanValidateNamesTheLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ from, to, want string }{
		{"matrix:", "matrx:", `:17: unknown key "matrx" in the plan`},
		{"    init: once", "    init: onse", `:5: init: "onse" is not`},
		{"      scale: 1", "      scale: x", `:16: scale: invalid argument "x"`},
		{"protocol: [simple, prepared]", "protocol: [simple, prepard]", `:19: protocol: -M: unknown query mode "prepard"`},
	} {
		file := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(file, []byte(strings.Replace(sixCells, tc.from, tc.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		env := append(cleanEnv(), "PLAN_TEST_DSN=postgres://nowhere/x")
		wantUsage(t, pgarena(t, env, "plan", "validate", file), file+tc.want)
	}
}

// TestFindMaxConverges: find-max on a workload whose capacity is known
// (8 clients each sleeping 100 ms per transaction; the true limit is
// measured in a closed loop, which runs at capacity) finds it within 10%.
// Not parallel: the other tests of the package would change the capacity
// between the measurement and the search on a small machine.
//
// Other processes of a loaded host still can: the capacity is measured
// just before and just after the search, and the search is judged only if
// the host held it steady: both measurements within 5% of each other, and
// a service time p99 (a pg_sleep(0.1), queueing excluded) of at most
// stallMs in them and in the lowest step that broke the SLO. A stall can
// break a step below the capacity, never make one above it hold, and the
// rate found is bounded by that lowest broken step only. An attempt the
// host disturbed is logged and made again, at most three times.
func TestFindMaxConverges(t *testing.T) {
	dsn := pgtest.DSN(t)
	var unsteady []string
	for attempt := 1; attempt <= 3; attempt++ {
		why := findMaxAttempt(t, dsn)
		if why == "" {
			return
		}
		t.Logf("attempt %d not judged: %s", attempt, why)
		unsteady = append(unsteady, why)
	}
	t.Fatalf("the host did not hold the capacity steady in 3 attempts: %s", strings.Join(unsteady, "; "))
}

// stallMs is a service time no pg_sleep(0.1) takes on a host that runs
// the test's processes when they are ready: one took longer, the host
// stalled them.
const stallMs = 2 * sleepSeconds * 1000

// findMaxAttempt measures the capacity, runs find-max and measures again.
// It judges find-max's rate (t.Errorf) and returns "", or returns why the
// host did not hold the capacity steady enough to judge it.
func findMaxAttempt(t *testing.T, dsn string) (unsteady string) {
	t.Helper()
	results := t.TempDir()
	capacity := func() (*store.Run, float64) {
		// -t: 30 transactions per client, not -T, whose end cuts the
		// clients' last transactions off the count (up to 8 of 240).
		r := mustRun(t, "run", "zz-sleep", "-c", "8", "-t", "30", "--dsn", dsn, "--results", results, "--json",
			"--sample-interval", "0")
		return loadLast(t, results), num(t, summaryJSON(t, r.stdout), "tps")
	}
	first, before := capacity()
	r := mustRun(t, "find-max", "zz-sleep", "--slo", "p99<400ms", "--start", "20", "--window", "3s",
		"-c", "8", "--arrival", "uniform", "--dsn", dsn, "--results", results, "--json", "--sample-interval", "0", "-P", "0")
	last, after := capacity()
	var res struct {
		Rate   float64 `json:"rate"`
		Probes []struct {
			Rate  float64 `json:"rate"`
			RunID string  `json:"run_id"`
			Held  bool    `json:"held"`
			Why   string  `json:"why"`
		} `json:"probes"`
		Above *struct {
			RunID string `json:"run_id"`
		} `json:"above"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("find-max --json: %v\n%s", err, r)
	}
	runs := []*store.Run{first, last}
	if res.Above != nil { // the lowest rate that broke the SLO: the one that bounds the rate found
		st, err := store.Open(results)
		if err != nil {
			t.Fatal(err)
		}
		above, err := st.Load(res.Above.RunID)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, above)
	}
	for _, run := range runs {
		if p99 := run.Summary.Service.P99; p99 > stallMs {
			return fmt.Sprintf("run %s: service time p99 %.0f ms for a pg_sleep(%g)", run.ID, p99, sleepSeconds)
		}
	}
	if math.Abs(after-before) > 0.05*min(before, after) {
		return fmt.Sprintf("the capacity moved from %.1f to %.1f tps during the search", before, after)
	}
	limit := (before + after) / 2
	if limit > 1.05*8/sleepSeconds || limit < 0.5*8/sleepSeconds {
		t.Fatalf("closed-loop capacity %.1f tps, expected about %.0f", limit, 8/sleepSeconds)
	}
	t.Logf("closed-loop capacity %.1f then %.1f tps; find-max %.0f tx/s; probes %+v", before, after, res.Rate, res.Probes)
	if math.Abs(res.Rate-limit)/limit > 0.10 || res.Above == nil {
		t.Errorf("find-max found %.0f tx/s, the true limit is %.1f tps (want within 10%%)\n%s", res.Rate, limit, r.stderr)
	}
	return ""
}

// TestExamplePlansValidate: every plan under examples/ decodes and every
// cell's run flags parse (the DSNs' variables set to placeholders).
func TestExamplePlansValidate(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if len(files) < 5 {
		t.Fatalf("found %d example plans, want at least 5", len(files))
	}
	env := cleanEnv()
	for _, v := range []string{"POOLERS_HOST=db1", "STORAGE_HOST=db1"} {
		env = append(env, v)
	}
	for _, v := range []string{"PRIMARY_DSN", "STANDBY_DSN", "AWS_DSN", "AZURE_DSN", "GCP_DSN", "CITUS_C4_2W8", "CITUS_C8_2W16", "CITUS_C8_4W8"} {
		env = append(env, v+"=postgres://bench@"+strings.ToLower(v)+"/bench")
	}
	for _, f := range files {
		r := pgarena(t, env, "plan", "validate", f)
		if r.code != 0 || !strings.Contains(r.stdout, " cells x ") {
			t.Errorf("plan validate %s:\n%s", f, r)
		}
	}
}

// TestPlanValidateNamesEveryUnsetVariable: a plan whose targets take their
// DSNs from the environment names every variable that is not set in one
// line, not one per attempt.
func TestPlanValidateNamesEveryUnsetVariable(t *testing.T) {
	t.Parallel()
	file := "../../examples/clouds.yaml"
	env := append(cleanEnv(), "AZURE_DSN=postgres://bench@azure/bench")
	wantUsage(t, pgarena(t, env, "plan", "validate", file), ": dsn: the environment variables AWS_DSN, GCP_DSN are not set")
}
