package serve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/store"
)

// TestFillBenchRuns fills $PGARENA_SERVE_BENCH_DIR with $PGARENA_SERVE_BENCH_RUNS
// (default 1000) synthetic finished runs for bench/serve-list.sh: one recorded
// with the store's writer ($PGARENA_SERVE_BENCH_INTERVALS intervals, default 60),
// the others copies of it with their own id, time and label, every tenth a
// plan cell. Skipped without the variable.
func TestFillBenchRuns(t *testing.T) {
	dir := os.Getenv("PGARENA_SERVE_BENCH_DIR")
	if dir == "" {
		t.Skip("PGARENA_SERVE_BENCH_DIR not set (bench/serve-list.sh sets it)")
	}
	n, intervals := envInt("PGARENA_SERVE_BENCH_RUNS", 1000), envInt("PGARENA_SERVE_BENCH_INTERVALS", 60)
	fx := reporttest.Fixture{Label: "seed", Workload: "tpcb", Scale: "10", Clients: 8, Speed: 1, Intervals: intervals, Warmup: 2, Deadlocks: 1}
	ids, err := reporttest.Write(dir, []reporttest.Fixture{fx})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, ids[0])
	var spec map[string]any
	b, err := os.ReadFile(filepath.Join(src, store.SpecFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Duration(n) * time.Hour)
	for i := 1; i < n; i++ {
		id := fmt.Sprintf("%s-%05d", ids[0], i)
		dst := filepath.Join(dir, id)
		if err := os.Mkdir(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{store.IntervalsFile, store.SummaryFile, store.ServerFile, store.HistogramsFile} {
			copyFile(t, filepath.Join(src, f), filepath.Join(dst, f))
		}
		spec["id"], spec["created"], spec["label"] = id, t0.Add(time.Duration(i)*time.Hour), fmt.Sprintf("setup-%d", i%37)
		delete(spec, "plan")
		if i%10 == 0 {
			spec["plan"], spec["cell"], spec["cell_name"], spec["repeat"] = "bench", fmt.Sprintf("c%d", i%7), fmt.Sprintf("local/tpcb/clients=%d", i%7), 1+i/70
		}
		b, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, store.SpecFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
