package analytic

import (
	"errors"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/workload"
)

// TestStreamOrder: a stream deals its queries in order from its start,
// wrapping around, offset into the workload's types.
func TestStreamOrder(t *testing.T) {
	set := Set{{Name: "q1"}, {Name: "q2"}, {Name: "q3"}}
	s := NewStream(set, 5, 1)
	var got []workload.TxType
	for range 5 {
		got = append(got, s.Next())
	}
	want := []workload.TxType{6, 7, 5, 6, 7}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("types %v, want %v", got, want)
		}
	}
	if err := s.Do(t.Context(), nil, 4); err == nil {
		t.Error("a type before the stream's offset runs")
	}
}

// TestCompletedAndQphH counts a set's queries with and without group
// names, and QphH is queries × 3600 / seconds.
func TestCompletedAndQphH(t *testing.T) {
	set := Set{{Name: "q1"}, {Name: "q2"}}
	n := set.Completed(map[string]int64{"olap/q1": 3, "q2": 2, "oltp/new_order": 100})
	if n != 5 {
		t.Errorf("completed %d, want 5", n)
	}
	if got := QphH(44, 10*time.Minute); got != 264 {
		t.Errorf("QphH = %v, want 264", got)
	}
	if got := QphH(1, 0); got != 0 {
		t.Errorf("QphH over no time = %v, want 0", got)
	}
}

// TestOrderedStream: an ordered stream deals its order's queries, round
// after round, and ends after its rounds with workload.ErrStopped.
func TestOrderedStream(t *testing.T) {
	set := Set{{Name: "q1"}, {Name: "q2"}, {Name: "q3"}}
	s := NewOrderedStream(set, 2, []int{2, 0}, 2)
	if s.Len() != 4 {
		t.Fatalf("Len = %d, want 4", s.Len())
	}
	var got []workload.TxType
	for range 4 {
		got = append(got, s.Next())
	}
	want := []workload.TxType{4, 2, 4, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("types %v, want %v", got, want)
		}
	}
	s.Next()
	if err := s.Do(t.Context(), nil, 4); !errors.Is(err, workload.ErrStopped) {
		t.Fatalf("after its rounds Do = %v, want ErrStopped", err)
	}
}
