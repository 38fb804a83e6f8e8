package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
)

func TestSamplesRoundTrip(t *testing.T) {
	s := openStore(t)
	w, err := s.Create(testSpec("tpcb", t0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := os.Stat(w.Path(SamplesFile)); !os.IsNotExist(err) {
		t.Fatalf("samples.jsonl exists before the first sample: %v", err)
	}
	batch1 := []Sample{
		{Time: t0, Source: "pg_stat_database", Values: map[string]float64{"pg.xact_commit_per_s": 120.5, "pg.bad": math.NaN()}},
		{Time: t0, Source: "pg_stat_statements", Note: "pg_stat_statements: not installed, skipped"},
	}
	batch2 := []Sample{
		{Time: t0.Add(time.Second), Source: "pg_stat_database", Values: map[string]float64{"pg.xact_commit_per_s": 130}},
		{Time: t0.Add(time.Second), Source: "host_cpu", Values: map[string]float64{"host.cpu.user_pct": 12.5},
			Labels: map[string]string{"db_host": "true"}},
	}
	if err := w.AppendSamples(batch1...); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSamples(batch2...); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSamples(); err != nil {
		t.Fatal(err)
	}
	if _, ok := batch1[0].Values["pg.bad"]; !ok {
		t.Error("AppendSamples changed the caller's map")
	}
	findings := []Finding{{Severity: SeverityWarning, Kind: "deadlocks", Message: "3 deadlocks"},
		{Severity: SeverityInfo, Kind: "connections_dropped", Message: "dropped", Time: t0}}
	if err := w.SetFindings(findings); err != nil {
		t.Fatal(err)
	}

	r, err := s.Load(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) != 4 || r.Truncated {
		t.Fatalf("%d samples (truncated %v), want 4", len(r.Samples), r.Truncated)
	}
	if _, ok := r.Samples[0].Values["pg.bad"]; ok {
		t.Error("NaN value was stored")
	}
	jsonEqual(t, "findings", r.Findings, findings)
	if got, want := r.SeriesNames(), []string{"host.cpu.user_pct", "pg.xact_commit_per_s"}; !slices.Equal(got, want) {
		t.Errorf("series names %v, want %v", got, want)
	}
	pts := r.Series("pg.xact_commit_per_s")
	if len(pts) != 2 || pts[0].Value != 120.5 || !pts[1].Time.Equal(t0.Add(time.Second)) {
		t.Errorf("series %+v", pts)
	}
	if got := r.Notes(); len(got) != 1 || got[0] != "pg_stat_statements: not installed, skipped" {
		t.Errorf("notes %q", got)
	}
	if r.Samples[3].Labels["db_host"] != "true" {
		t.Errorf("labels lost: %+v", r.Samples[3])
	}

	// A torn final line (a writer killed mid-write) is ignored and flagged.
	f, err := os.OpenFile(w.Path(SamplesFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"time":"2026-11-22T03:15:14Z","source":"host_c`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err = s.Load(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) != 4 || !r.Truncated {
		t.Fatalf("torn line: %d samples, truncated %v", len(r.Samples), r.Truncated)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSamples(batch2...); err == nil {
		t.Error("AppendSamples after Close succeeded")
	}
}

func TestLoadWithoutSamples(t *testing.T) {
	s := openStore(t)
	w, err := s.Create(testSpec("tpcb", t0))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples != nil || r.Findings != nil || len(r.SeriesNames()) != 0 {
		t.Errorf("samples %v findings %v", r.Samples, r.Findings)
	}
}

// TestSampleJSON: samples.jsonl's lines are what encoding/json writes,
// with an encoder that remembers each source's keys and the last time:
// random samples, each twice, and a source whose series change (as many,
// other names; fewer; more).
func TestSampleJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var e sampleEncoder
	check := func(name string, s Sample) {
		t.Helper()
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.append([]byte("x"), s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[1:], want) {
			t.Fatalf("%s: by hand\n%s\nencoding/json\n%s", name, got[1:], want)
		}
	}
	for i := range 500 {
		var s Sample
		if i > 0 {
			fillRandom(reflect.ValueOf(&s).Elem(), r, 0)
		}
		check(fmt.Sprint("case ", i), s)
		check(fmt.Sprint("case ", i, " again"), s)
	}
	for i, vals := range []map[string]float64{
		{"pg.wait.a": 1, "pg.wait.b": 2},
		{"pg.wait.a": 3, "pg.wait.b": 4},
		{"pg.wait.a": 5, "pg.wait.c": 6},
		{"pg.wait.c": 7},
		{"pg.wait.c": 8, "pg.wait.<d>": 9, "pg.wait.a": 10},
		{},
		{"pg.wait.c": 11},
	} {
		at := t0.Add(time.Duration(i/2) * time.Second)
		if i == 6 {
			at = t0.Add(2 * time.Second).In(time.FixedZone("x", 3600)) // case 5's instant, formatted otherwise
		}
		check(fmt.Sprint("activity ", i), Sample{Time: at, Source: "activity", Values: vals})
	}
}

// TestIntervalsSyncPolicy: intervals.jsonl is fsynced as samples.jsonl
// is, once its oldest unsynced append is syncEvery old, and by Finish.
func TestIntervalsSyncPolicy(t *testing.T) {
	w, err := openStore(t).Create(testSpec("tpcb", t0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 3 {
		if err := w.AppendIntervals(metrics.Interval{Seq: i, Start: t0, End: t0.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	first := w.intervalsDirty
	if first.IsZero() {
		t.Fatal("appends synced at once")
	}
	w.intervalsDirty = first.Add(-syncEvery)
	if err := w.AppendIntervals(metrics.Interval{Seq: 3, Start: t0, End: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if !w.intervalsDirty.IsZero() {
		t.Fatalf("not synced %s after the oldest append", syncEvery)
	}
	if err := w.AppendIntervals(metrics.Interval{Seq: 4, Start: t0, End: t0.Add(time.Second)}); err != nil || w.intervalsDirty.IsZero() {
		t.Fatalf("append after a sync: %v, dirty since %v", err, w.intervalsDirty)
	}
	if err := w.Finish(metrics.Summary{Status: metrics.StatusComplete}, nil); err != nil {
		t.Fatal(err)
	}
	if !w.intervalsDirty.IsZero() {
		t.Error("Finish left intervals unsynced")
	}
	if b, err := os.ReadFile(w.Path(IntervalsFile)); err != nil || bytes.Count(b, []byte{'\n'}) != 5 {
		t.Errorf("intervals.jsonl: %d lines (%v)", bytes.Count(b, []byte{'\n'}), err)
	}
}

// TestSamplesSyncPolicy: samples.jsonl is fsynced once its oldest unsynced
// append is syncEvery old, and by Finish; not at every append.
func TestSamplesSyncPolicy(t *testing.T) {
	w, err := openStore(t).Create(testSpec("tpcb", t0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	smp := Sample{Time: t0, Source: "host_cpu", Values: map[string]float64{"host.cpu.busy_pct": 50}}
	for range 3 {
		if err := w.AppendSamples(smp); err != nil {
			t.Fatal(err)
		}
	}
	first := w.samplesDirty
	if first.IsZero() {
		t.Fatal("appends synced at once")
	}
	w.samplesDirty = first.Add(-syncEvery)
	if err := w.AppendSamples(smp); err != nil {
		t.Fatal(err)
	}
	if !w.samplesDirty.IsZero() {
		t.Fatalf("not synced %s after the oldest append", syncEvery)
	}
	if err := w.AppendSamples(smp); err != nil || w.samplesDirty.IsZero() {
		t.Fatalf("append after a sync: %v, dirty since %v", err, w.samplesDirty)
	}
	if err := w.Finish(metrics.Summary{Status: metrics.StatusComplete}, nil); err != nil {
		t.Fatal(err)
	}
	if !w.samplesDirty.IsZero() {
		t.Error("Finish left samples unsynced")
	}
	if b, err := os.ReadFile(w.Path(SamplesFile)); err != nil || bytes.Count(b, []byte{'\n'}) != 5 {
		t.Errorf("samples.jsonl: %d lines (%v)", bytes.Count(b, []byte{'\n'}), err)
	}
}
