package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/golden"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/store"
)

// loadFixtures writes fixtures and loads them, in order.
func loadFixtures(t testing.TB, fxs ...reporttest.Fixture) []*store.Run {
	t.Helper()
	dir := t.TempDir()
	ids, err := reporttest.Write(dir, fxs)
	if err != nil {
		t.Fatal(err)
	}
	st := store.OpenReadOnly(dir)
	runs := make([]*store.Run, len(ids))
	for i, id := range ids {
		if runs[i], err = st.Load(id); err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

// TestSweepSummaryText: a sweep prints one row per step and labels the
// blend of all steps as such; no line reads as a one-level result.
func TestSweepSummaryText(t *testing.T) {
	r := loadFixtures(t, reporttest.Sweep())[0]
	if len(r.Summary.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(r.Summary.Steps))
	}
	var b bytes.Buffer
	SummaryText(&b, &r.Summary)
	golden.Check(t, "summary-sweep.golden", b.Bytes())
	out := b.String()
	for _, bad := range []string{"\nnumber of clients:", "\ntps = ", "\nlatency average"} {
		if strings.Contains(out, bad) {
			t.Errorf("sweep summary has an unlabelled blended line %q:\n%s", strings.TrimSpace(bad), out)
		}
	}
}

// TestSweepStepsFromIntervals: an interrupted sweep (no summary.json) gets
// its steps, with clients from the spec and per-type rows, from its
// intervals; the last step carries the run's status.
func TestSweepStepsFromIntervals(t *testing.T) {
	fx := reporttest.Sweep()
	fx.Interrupted = true
	r := loadFixtures(t, fx)[0]
	steps := r.Summary.Steps
	if len(steps) != 3 {
		t.Fatalf("%d steps, want 3", len(steps))
	}
	for i, st := range steps {
		if st.Step != i+1 || st.Clients != fx.Steps[i] || len(st.Tx) != 2 || st.Transactions == 0 || st.Start.IsZero() {
			t.Errorf("step %d: %+v", i+1, st)
		}
		want := metrics.StatusComplete
		if i == 2 {
			want = metrics.StatusInterrupted
		}
		if st.Status != want {
			t.Errorf("step %d status %q, want %q", i+1, st.Status, want)
		}
	}
	if !(steps[0].TPS < steps[1].TPS && steps[1].TPS < steps[2].TPS) {
		t.Errorf("step tps not rising with clients: %v %v %v", steps[0].TPS, steps[1].TPS, steps[2].TPS)
	}
}
