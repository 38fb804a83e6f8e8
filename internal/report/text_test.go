package report

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/golden"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
)

var t0 = time.Date(2026, 11, 22, 3, 15, 12, 0, time.UTC)

// fixedIntervals builds 10 one-second intervals of two transaction types
// with known latencies: type a takes (1+i%10) ms, type b 20 ms; one
// deadlock and one retry per interval.
func fixedIntervals() []metrics.Interval {
	rec := metrics.NewRecorder([]string{"a", "b"}, t0)
	h := rec.NewHandle()
	var out []metrics.Interval
	for s := 0; s < 10; s++ {
		base := t0.Add(time.Duration(s) * time.Second)
		for i := 0; i < 100; i++ {
			h.Record(0, base, base, base.Add(time.Duration(1+i%10)*time.Millisecond), pgerr.ClassNone)
		}
		for i := 0; i < 10; i++ {
			h.Record(1, base, base.Add(5*time.Millisecond), base.Add(20*time.Millisecond), pgerr.ClassNone)
		}
		h.Fail(1, pgerr.ClassDeadlock, pgerr.ErrorDetail{Time: base.Add(300 * time.Millisecond), Severity: "ERROR",
			SQLState: "40P01", Message: "deadlock detected",
			Detail: fmt.Sprintf("Process %d waits for ShareLock on transaction %d; blocked by process 77.", 100+s, 900+s),
			Hint:   "See server log for query details."})
		h.Retry(0, pgerr.ClassSerialization, true)
		iv := rec.Tick(base.Add(time.Second))
		iv.Connected = 8
		out = append(out, iv)
	}
	return out
}

func TestProgressLineGolden(t *testing.T) {
	ivs := fixedIntervals()
	var b bytes.Buffer
	for i := 0; i < 10; i += 5 {
		b.WriteString(ProgressLine(time.Duration(i+5)*time.Second, ivs[i:i+5]) + "\n")
	}
	golden.Check(t, "progress.golden", b.Bytes())
}

func TestSummaryTextGolden(t *testing.T) {
	var acc metrics.Accumulator
	for _, iv := range fixedIntervals() {
		acc.Add(iv)
	}
	s := metrics.Summary{RunID: "20261122-031512-tpcb", Status: metrics.StatusComplete, Workload: "tpcb",
		Label: "azure-8core", QueryMode: "prepared", Clients: 8, Threads: 2,
		Params: map[string]string{"scale": "10", "script": "tpcb-like"}, InitialConnectMS: 12.5, Start: t0}
	acc.Fill(&s)
	var b bytes.Buffer
	SummaryText(&b, &s)
	golden.Check(t, "summary.golden", b.Bytes())
	if s.Transactions != 1100 || s.Failed != 10 || s.Retries != 10 || s.TPS != 110 {
		t.Fatalf("totals %d/%d/%d tps %v", s.Transactions, s.Failed, s.Retries, s.TPS)
	}
}

// TestSummaryTextTPCCGolden: a tpcc run says how many warehouses the
// database had, that transactions ran as stored procedures, and its NOPM
// and TPM.
func TestSummaryTextTPCCGolden(t *testing.T) {
	var acc metrics.Accumulator
	for _, iv := range fixedIntervals() {
		acc.Add(iv)
	}
	s := metrics.Summary{RunID: "20261122-031512-tpcc", Status: metrics.StatusComplete, Workload: "tpcc",
		QueryMode: "prepared", Clients: 8, Threads: 2, InitialConnectMS: 12.5,
		Params: map[string]string{"warehouses": "4", "stored_procs": "true", "stored_procs_present": "true", "all_warehouses": "false"},
		Figures: []metrics.Figure{
			{Name: "nopm", Value: 2970, Unit: "new orders/min"},
			{Name: "tpm", Value: 6600, Unit: "transactions/min", Note: "server-wide commits and rollbacks"},
			{Name: "rollbacks", Value: 1, Unit: "transactions", Tx: "a"},
		}}
	acc.Fill(&s)
	var b bytes.Buffer
	SummaryText(&b, &s)
	golden.Check(t, "summary_tpcc.golden", b.Bytes())
}

func TestRunListGolden(t *testing.T) {
	var b bytes.Buffer
	RunList(&b, []RunRow{
		{ID: "20261122-031512-tpcb", Created: t0, Label: "pool-a", Workload: "tpcb", Clients: 8, TPS: 1234.56, P95MS: 9.1, Status: "complete"},
		{ID: "20261122-021512-tpcb", Created: t0.Add(-time.Hour), Workload: "tpcb", Clients: 1, Status: "interrupted"},
	}, time.UTC)
	golden.Check(t, "list.golden", b.Bytes())
}

// A failure's text is printed under "failed by class": the same text once
// with its first and last time, and what to do about a class that has
// advice, once.
func TestSummaryTextErrorLines(t *testing.T) {
	rec := metrics.NewRecorder([]string{"tpcb-like"}, t0)
	h := rec.NewHandle()
	for i := 0; i < 3; i++ {
		h.Fail(0, pgerr.ClassPreparedStatements, pgerr.ErrorDetail{Time: t0.Add(time.Duration(i+1) * time.Second),
			Severity: "ERROR", SQLState: "26000", Message: `prepared statement "stmtcache_1" does not exist`})
	}
	var acc metrics.Accumulator
	acc.Add(rec.Tick(t0.Add(5 * time.Second)))
	s := metrics.Summary{Start: t0}
	acc.Fill(&s)
	var b bytes.Buffer
	SummaryText(&b, &s)
	want := "  failed by class: prepared_statements 3\n" +
		"    prepared_statements, first at 1.0 s, last at 3.0 s: ERROR 26000: prepared statement \"stmtcache_1\" does not exist\n" +
		"    what to do about prepared_statements: " + pgerr.ClassPreparedStatements.Advice() + "\n"
	if !bytes.Contains(b.Bytes(), []byte(want)) {
		t.Fatalf("summary lacks\n%s\ngot:\n%s", want, b.String())
	}
}

// TestProgressReset: a Progress reset after each line writes the lines
// ProgressLine writes.
func TestProgressReset(t *testing.T) {
	ivs := fixedIntervals()
	var p Progress
	for i := 0; i < 10; i += 5 {
		for _, iv := range ivs[i : i+5] {
			p.Add(iv)
		}
		elapsed := time.Duration(i+5) * time.Second
		if got, want := p.Line(elapsed), ProgressLine(elapsed, ivs[i:i+5]); got != want {
			t.Errorf("after a reset:\n%s\nwant\n%s", got, want)
		}
		p.Reset()
	}
}
