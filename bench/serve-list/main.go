// Command serve-list fills a results directory with synthetic finished runs
// for bench/serve-list.sh: one run is recorded with the store's writer, the
// others are copies of it with their own id, time and label (and every tenth
// one a plan cell).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/store"
)

func main() {
	dir := flag.String("dir", "", "results directory to fill")
	n := flag.Int("n", 1000, "runs")
	intervals := flag.Int("intervals", 60, "intervals per run")
	flag.Parse()
	if err := fill(*dir, *n, *intervals); err != nil {
		fmt.Fprintln(os.Stderr, "serve-list:", err)
		os.Exit(1)
	}
}

func fill(dir string, n, intervals int) error {
	fx := reporttest.Fixture{Label: "seed", Workload: "tpcb", Scale: "10", Clients: 8, Speed: 1, Intervals: intervals, Warmup: 2, Deadlocks: 1}
	ids, err := reporttest.Write(dir, []reporttest.Fixture{fx})
	if err != nil {
		return err
	}
	src := filepath.Join(dir, ids[0])
	var spec map[string]any
	b, err := os.ReadFile(filepath.Join(src, store.SpecFile))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return err
	}
	t0 := time.Now().Add(-time.Duration(n) * time.Hour)
	for i := 1; i < n; i++ {
		id := fmt.Sprintf("%s-%05d", ids[0], i)
		dst := filepath.Join(dir, id)
		if err := os.Mkdir(dst, 0o755); err != nil {
			return err
		}
		for _, f := range []string{store.IntervalsFile, store.SummaryFile, store.ServerFile, store.HistogramsFile} {
			if err := copyFile(filepath.Join(src, f), filepath.Join(dst, f)); err != nil {
				return err
			}
		}
		spec["id"], spec["created"], spec["label"] = id, t0.Add(time.Duration(i)*time.Hour), fmt.Sprintf("setup-%d", i%37)
		delete(spec, "plan")
		if i%10 == 0 {
			spec["plan"], spec["cell"], spec["cell_name"], spec["repeat"] = "bench", fmt.Sprintf("c%d", i%7), fmt.Sprintf("local/tpcb/clients=%d", i%7), 1+i/70
		}
		b, err := json.Marshal(spec)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, store.SpecFile), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
