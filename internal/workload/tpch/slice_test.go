package tpch

import "testing"

// Slices of one split, or of several, complete the set when they cover
// every table's chunks; the one-chunk tables and tpch_state are slice 0's.
func TestSliceCoverage(t *testing.T) {
	w := New()
	w.scale = 0.01 // orders and lineitem: 15 chunks; supplier, nation, region: 1
	for _, c := range []struct {
		names []string
		want  bool
	}{
		{[]string{"0of1"}, true},
		{[]string{"0of3", "1of3", "2of3"}, true},
		{[]string{"2of3", "0of3"}, false},
		{[]string{"0of2", "1of3", "2of3"}, true},
		{[]string{"1of2", "0of3"}, false}, // 0of3: chunks 0-4 of 15, 1of2: 8-14
		{[]string{"0of3", "1of3", "2of3", "junk"}, true},
	} {
		if err := w.SliceOf(0, 3); err != nil {
			t.Fatal(err)
		}
		s, _ := w.Slice()
		if got := s.Complete(c.names); got != c.want {
			t.Errorf("Complete(%v) = %v, want %v", c.names, got, c.want)
		}
	}
	if err := w.SliceOf(1, 3); err != nil {
		t.Fatal(err)
	}
	s, _ := w.Slice()
	for table, want := range map[string]string{"nation": "", "supplier": "", stateTable: "",
		// chunks 5-9 of 15: dbgen's orders 5001..10000, sparse keys
		"orders": "delete from orders where o_orderkey between 20001 and 40000"} {
		if got := s.Clear(table); got != want {
			t.Errorf("slice 1 of 3: Clear(%s) = %q, want %q", table, got, want)
		}
	}
	for _, tb := range w.Tables() {
		small := tb.Name == "nation" || tb.Name == "region" || tb.Name == "supplier" || tb.Name == stateTable
		if small != (tb.Rows.N == 0) {
			t.Errorf("slice 1 of 3: table %s has %d batches", tb.Name, tb.Rows.N)
		}
	}
}
