package session

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/workload"
)

// ExplainFile is the run file of workload.Explainer's plan of the
// slowest transaction type.
const ExplainFile = "explain-slowest.txt"

// explainWait bounds the EXPLAIN ANALYZE, which runs the statement once
// more.
const explainWait = 10 * time.Minute

// explainMax keeps the saved plan small.
const explainMax = 64 << 10

// explainSlowest saves, when the run's workload asks for it, the plan of
// its slowest transaction type (highest mean latency) that has one.
func (r *run) explainSlowest(ctx context.Context) {
	var ex workload.Explainer
	for _, w := range r.workloads() {
		if e, ok := w.(workload.Explainer); ok && e.ExplainSlowest() {
			ex = e
			break
		}
	}
	if ex == nil {
		return
	}
	types := slices.Clone(r.sum.Tx)
	slices.SortStableFunc(types, func(a, b metrics.TxSummary) int { return cmp.Compare(b.Latency.Avg, a.Latency.Avg) })
	ctx, cancel := context.WithTimeout(ctx, explainWait)
	defer cancel()
	for _, t := range types {
		if t.Transactions == 0 {
			continue
		}
		text, err := ex.Explain(ctx, r.conn, t.Name)
		if err != nil {
			r.notef("explain the slowest, %s: %v", t.Name, err)
			return
		}
		if text == "" {
			continue
		}
		if len(text) > explainMax {
			text = text[:explainMax] + "\n[cut at 64 KB]\n"
		}
		text = fmt.Sprintf("-- %s: the slowest of the run, mean %.3f ms over %d\n%s", t.Name, t.Latency.Avg, t.Transactions, text)
		path := r.writer.Path(ExplainFile)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			r.notef("could not save the plan of %s: %v", t.Name, err)
			return
		}
		r.notef("EXPLAIN (ANALYZE, BUFFERS) of %s, the slowest (mean %.1f ms), saved in %s", t.Name, t.Latency.Avg, path)
		return
	}
}
