package tpch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/golden"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/tpch/qgen"
)

func newWorkload(t *testing.T, args ...string) *Workload {
	t.Helper()
	return loadertest.Configured(t, New(), args...)
}

// loaded inits tpch at scale 0.01 and returns a prepared workload and a
// connection.
func loaded(t *testing.T) (*Workload, *pgx.Conn) {
	t.Helper()
	w := newWorkload(t, "--scale", "0.01")
	dsn := loadertest.Loaded(t, w)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if err := w.Prepare(context.Background(), conn); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	return w, conn
}

// TestLoadFingerprintAndCheck loads scale 0.01 and pins each table's row
// count and the md5 of its rows in key order (testdata/fingerprint_0.01.golden),
// then checks counts and keys.
func TestLoadFingerprintAndCheck(t *testing.T) {
	ctx := context.Background()
	_, conn := loaded(t)
	fp, err := Fingerprint(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, name := range tableNames() {
		b.WriteString(name + " " + fp[name] + "\n")
	}
	golden.Check(t, "fingerprint_0.01.golden", []byte(b.String()))
	w := newWorkload(t)
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if w.scale != 0.01 || w.rf1Next != 1 || w.rf2Next != 1 {
		t.Errorf("state: scale %g, rf1_next %d, rf2_next %d; want 0.01, 1, 1", w.scale, w.rf1Next, w.rf2Next)
	}
	if err := w.Check(ctx, conn); err != nil {
		t.Fatalf("check: %v", err)
	}
}

// TestRefreshSetsAdvance runs RF1 and RF2 as two runs would (each a new
// workload reading the state table): the second pair takes the next sets,
// so no key is inserted twice, and counts and keys check after each.
func TestRefreshSetsAdvance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, conn := loaded(t)
	for run := 1; run <= 2; run++ {
		w := newWorkload(t)
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if w.rf1Next != run || w.rf2Next != run {
			t.Fatalf("run %d: next sets RF1 %d, RF2 %d; want %d", run, w.rf1Next, w.rf2Next, run)
		}
		if err := w.RF1(ctx, conn); err != nil {
			t.Fatalf("run %d: rf1: %v", run, err)
		}
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if err := w.Check(ctx, conn); err != nil { // orders: one set more
			t.Fatalf("run %d: check after rf1: %v", run, err)
		}
		if err := w.RF2(ctx, conn); err != nil {
			t.Fatalf("run %d: rf2: %v", run, err)
		}
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if err := w.Check(ctx, conn); err != nil {
			t.Fatalf("run %d: check after rf2: %v", run, err)
		}
	}
	w := newWorkload(t, "--answers")
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	err := w.Check(ctx, conn)
	if _, ok := err.(*workload.InputError); !ok || !strings.Contains(err.Error(), "refresh sets have changed the data") {
		t.Errorf("check --answers after refreshes: %v, want an InputError on changed data", err)
	}
	// a scale without an answer set is bad input too, not a failed check
	w.scale, w.rf1Next, w.rf2Next = 0.02, 1, 1
	err = w.Check(ctx, conn)
	if _, ok := err.(*workload.InputError); !ok || !strings.Contains(err.Error(), "no answer set for scale 0.02") {
		t.Errorf("check --answers at 0.02: %v, want an InputError", err)
	}
}

// TestCitusDDL pins the statements that distribute the tables on Citus
// in each layout and the keys init adds there (no foreign key between
// distributed tables that are not colocated).
func TestCitusDDL(t *testing.T) {
	for layout, file := range map[string]string{layoutReference: "citus.golden", layoutDistributed: "citus_distributed.golden"} {
		w := newWorkload(t, "--citus", "--shard-count", "16", "--citus-layout", layout)
		var b strings.Builder
		for _, s := range w.Distribute() {
			b.WriteString(s + ";\n")
		}
		for _, tb := range w.Tables() {
			for _, s := range tb.PostLoad {
				b.WriteString(s + ";\n")
			}
		}
		golden.Check(t, file, []byte(b.String()))
	}
	if len(newWorkload(t).Distribute()) != 0 {
		t.Error("without --citus (and no extension) Distribute returns statements")
	}
}

// TestFigures: power@size and throughput@size by their clauses' formulas,
// none when a query did not complete.
func TestFigures(t *testing.T) {
	committed := map[string]int64{}
	times := map[string]workload.TxTimes{}
	for _, n := range append(queryNames.Get(), "rf1", "rf2") {
		committed["power/"+n] = 1
		times["power/"+n] = workload.TxTimes{Total: 2 * time.Second, Min: 2 * time.Second}
	}
	w := newWorkload(t, "--power")
	w.scale = 10
	figs := w.Figures(workload.FigureWindow{Elapsed: time.Minute, Committed: committed, Times: times})
	if figs[0].Name != "power_at_size" || figs[0].Value != 3600*10/2 {
		t.Errorf("power figure %+v, want power_at_size 18000", figs[0])
	}
	delete(committed, "power/q7")
	if figs := w.Figures(workload.FigureWindow{Elapsed: time.Minute, Committed: committed, Times: times}); figs[0].Value != 0 || !strings.Contains(figs[0].Note, "q7 completed 0 times") {
		t.Errorf("power figure without q7: %+v", figs[0])
	}
	// both tests in one run: each its own groups' counts and times; Ts
	// is the run less the power test's 24 × 2 s
	w = newWorkload(t, "--power", "--throughput", "--streams", "3")
	w.scale = 1
	for _, n := range append(queryNames.Get(), "rf1", "rf2") {
		committed["streams/"+n] = 3
		times["streams/"+n] = workload.TxTimes{Total: time.Hour}
	}
	committed["power/q7"], committed["refresh/rf1"], committed["refresh/rf2"] = 1, 3, 3
	delete(committed, "streams/rf1")
	delete(committed, "streams/rf2")
	figs = w.Figures(workload.FigureWindow{Elapsed: 3600*time.Second + 48*time.Second, Committed: committed, Times: times})
	if len(figs) < 3 || figs[0].Value != 1800 || figs[1].Value != 66 || figs[2].Name != "qphh_at_size" || figs[2].Value != 344.7 {
		t.Errorf("power and throughput figures %+v, want power 1800, throughput 66, QphH 344.7", figs[:3])
	}
	w = newWorkload(t, "--throughput", "--streams", "3")
	w.scale = 1
	committed = map[string]int64{}
	for _, n := range append(queryNames.Get(), "rf1", "rf2") {
		committed[n] = 3
	}
	figs = w.Figures(workload.FigureWindow{Elapsed: 3600 * time.Second, Committed: committed})
	if figs[0].Name != "throughput_at_size" || figs[0].Value != 3*22 {
		t.Errorf("throughput figure %+v, want throughput_at_size 66", figs[0])
	}
}

// TestAnswers runs check --answers at scale 0.01 and 0.1 (not with
// -short: about 30 s): the 22 queries with the validation parameters
// against qgen's answer set (skipped, saying so, while qgen has none for
// the scale).
func TestAnswers(t *testing.T) {
	for _, sf := range []string{"0.01", "0.1"} {
		t.Run(sf, func(t *testing.T) {
			testAnswers(t, sf)
		})
	}
}

func testAnswers(t *testing.T, sf string) {
	w := newWorkload(t, "--scale", sf)
	if _, ok := qgen.Answers(w.scale); !ok {
		t.Skipf("qgen has no answer set for scale %s yet", sf)
	}
	if sf != "0.01" && testing.Short() {
		t.Skip("-short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, loadertest.Loaded(t, w))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	w = newWorkload(t, "--answers")
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx, conn); !passed(err) {
		t.Fatalf("check --answers: %v", err)
	}
}

// passed tells whether a Check error is nil or a note on a check that
// passed (check --answers' count).
func passed(err error) bool {
	var note *workload.CheckNote
	return err == nil || errors.As(err, &note)
}

// TestSegmentRefused: the power and throughput tests are not split over
// processes (bad input before any database work); looped streams are.
func TestSegmentRefused(t *testing.T) {
	w := newWorkload(t, "--throughput", "--streams", "4")
	w.SetSegment(0, 2)
	err := w.Prepare(context.Background(), nil)
	if _, ok := err.(*workload.InputError); !ok || !strings.Contains(err.Error(), "leave out --segment") {
		t.Errorf("prepare under --segment: %v, want an InputError", err)
	}
}
