package tpcc

import (
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/workload"
)

func TestFigures(t *testing.T) {
	w := &Workload{warehouses: 10}
	// databases 5 (the benchmark's) and 6 busy; 7 dropped during the run
	// (its work lost, never subtracted); 8 created during it (counted from 0)
	before := map[string]float64{"d_next_o_id": 30100, "xacts": 1000, "rollbacks": 0,
		"xacts_db:5": 1000, "xacts_db:6": 4000, "xacts_db:7": 90000}
	after := map[string]float64{"d_next_o_id": 30100 + 1200, "xacts": 1000 + 6000, "rollbacks": 12,
		"xacts_db:5": 1000 + 6000, "xacts_db:6": 4000 + 50000, "xacts_db:8": 4000}
	figs := w.Figures(workload.FigureWindow{Before: before, After: after, Elapsed: 2 * time.Minute, Committed: map[string]int64{"new_order": 1212}})
	got := map[string]float64{}
	for _, f := range figs {
		got[f.Name] = f.Value
	}
	// 1200 new orders in 2 minutes; the clients committed 1212 of which 12
	// rolled back; 60000 transactions in all databases (HammerDB's TPM),
	// 6000 in the benchmark's; 600 / (12.86 × 10) = 466.6%.
	want := map[string]float64{"nopm": 600, "nopm_clients": 600, "tpm": 30000, "tpm_database": 3000, "efficiency": 466.6}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	// A disagreement over 1% is reported in the note.
	figs = w.Figures(workload.FigureWindow{Before: before, After: after, Elapsed: 2 * time.Minute, Committed: map[string]int64{"new_order": 1312}})
	if figs[0].Note == "" || figs[0].Value != 600 || !strings.Contains(figs[0].Note, "differ") {
		t.Errorf("nopm note %q", figs[0].Note)
	}
}

// In a segment the database counts every segment's new orders and the
// clients only this one's: no disagreement is claimed (pgarena merge
// compares the merged figures, through CrossCheck).
func TestFiguresOfASegment(t *testing.T) {
	w := &Workload{warehouses: 10}
	w.SetSegment(0, 2)
	before := map[string]float64{"d_next_o_id": 30100, "xacts": 1000, "rollbacks": 0}
	after := map[string]float64{"d_next_o_id": 30100 + 1200, "xacts": 1000 + 6000, "rollbacks": 6}
	figs := w.Figures(workload.FigureWindow{Before: before, After: after, Elapsed: 2 * time.Minute, Committed: map[string]int64{"new_order": 606}})
	if figs[0].Name != "nopm" || figs[0].Value != 600 || strings.Contains(figs[0].Note, "differ") || figs[0].CrossCheck != "nopm_clients" {
		t.Errorf("nopm %+v", figs[0])
	}
}
