package tpch

import (
	"context"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/workload/tpch/qgen"
)

// Explain uses the parameters of the stream the slowest query ran in: the
// power test's stream 0, or stream 1 where it ran in several streams
// (the throughput test's, or the clients of a --queries run), and its
// header says which.
func TestExplainStream(t *testing.T) {
	t.Parallel()
	w, conn := loaded(t)
	ctx := context.Background()
	sqlOf := func(stream int) string {
		for _, q := range qgen.Stream(stream, int64(w.seed), w.scale) {
			if q.Number == 14 {
				return q.SQL
			}
		}
		t.Fatal("no q14")
		return ""
	}
	if sqlOf(0) == sqlOf(1) {
		t.Fatal("streams 0 and 1 have the same q14: pick another query")
	}
	w.throughput, w.streams = true, 3
	for _, c := range []struct {
		tx      string
		clients int
		stream  int
		header  string
	}{
		{"power/q14", 0, 0, "-- q14 with stream 0's parameters (the power test's)"},
		{"streams/q14", 0, 1, "-- q14 with stream 1's parameters (it ran in the throughput test's streams 1 to 3, each with its own)"},
		{"q14", 1, 1, "-- q14 with stream 1's parameters (the one client's)"},
		{"q14", 4, 1, "-- q14 with stream 1's parameters, client 0's (it ran in the streams 1 to 4 of the 4 clients, each with its own)"},
	} {
		if c.clients > 0 {
			if err := w.ValidateRun(c.clients); err != nil {
				t.Fatal(err)
			}
		}
		text, err := w.Explain(ctx, conn, c.tx)
		if err != nil {
			t.Fatalf("%s: %v", c.tx, err)
		}
		if !strings.HasPrefix(text, c.header) || !strings.Contains(text, sqlOf(c.stream)) || !strings.Contains(text, "Buffers:") {
			t.Errorf("%s with %d clients: want stream %d's q14 under %q:\n%.400s", c.tx, c.clients, c.stream, c.header, text)
		}
	}
	if text, err := w.Explain(ctx, conn, "refresh/rf1"); err != nil || text != "" {
		t.Errorf("rf1: %q, %v; want nothing", text, err)
	}
}
