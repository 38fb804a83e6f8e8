// Package analytic runs streams of named analytic queries, the client side
// of the decision-support benchmarks (CH-benCHmark now, TPC-H later).
//
// A Set is the ordered list of a benchmark's queries. Each query is a
// transaction type of its own (q1..q22), so the driver times every query
// and the run's per-type summary is the per-query table. A Stream is one
// analytic client: it runs the set's queries in order, round after round,
// reading and discarding every row (the time to the last row is the
// query's time). Figures over the stream (queries per hour) are QphH.
package analytic

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/workload"
)

// Query is one named analytic query.
type Query struct {
	Name string // transaction type name: "q1"
	SQL  string
}

// Set is a benchmark's queries, in stream order.
type Set []Query

// Names lists the queries' names, in order (for Workload.TxTypes).
func (s Set) Names() []string {
	out := make([]string, len(s))
	for i, q := range s {
		out[i] = q.Name
	}
	return out
}

// Stream is one analytic client's stream of queries: the set in order,
// starting over after the last. It implements workload.Worker for a
// workload whose transaction types hold the set's names from Offset on.
type Stream struct {
	set    Set
	offset workload.TxType
	next   int
	// order lists indexes of set in the stream's order (nil: the set's
	// order); rounds > 0 ends the stream after that many passes.
	order  []int
	rounds int
	ran    int // queries handed out by Next
}

// NewStream makes a stream over set whose first query is set[start mod
// len(set)]; offset is the TxType of set[0] in the workload's types.
func NewStream(set Set, offset workload.TxType, start int) *Stream {
	return &Stream{set: set, offset: offset, next: start % len(set)}
}

// NewOrderedStream makes a stream that runs set's queries in order (each
// an index of set; TPC-H's streams each have their own order) and, when
// rounds > 0, ends after that many passes over order: Do then returns
// workload.ErrStopped, and the driver ends the client.
func NewOrderedStream(set Set, offset workload.TxType, order []int, rounds int) *Stream {
	return &Stream{set: set, offset: offset, order: order, rounds: rounds}
}

// Len is the number of queries the stream runs before it ends (0: it
// never does); it implements workload.Lister.
func (s *Stream) Len() int {
	if s.order == nil || s.rounds <= 0 {
		return 0
	}
	return len(s.order) * s.rounds
}

// Next implements workload.Worker: the next query in order.
func (s *Stream) Next() workload.TxType {
	s.ran++
	if s.order != nil {
		tx := s.offset + workload.TxType(s.order[s.next])
		s.next = (s.next + 1) % len(s.order)
		return tx
	}
	tx := s.offset + workload.TxType(s.next)
	s.next = (s.next + 1) % len(s.set)
	return tx
}

// Do implements workload.Worker: it runs the query and reads every row.
func (s *Stream) Do(ctx context.Context, conn *pgx.Conn, tx workload.TxType) error {
	if n := s.Len(); n > 0 && s.ran > n {
		return workload.ErrStopped
	}
	i := int(tx - s.offset)
	if i < 0 || i >= len(s.set) {
		return fmt.Errorf("analytic: transaction type %d is not a query of this stream", tx)
	}
	return Run(ctx, conn, s.set[i])
}

// Run executes q on conn and reads (and drops) its rows.
func Run(ctx context.Context, conn *pgx.Conn, q Query) error {
	rows, err := conn.Query(ctx, q.SQL)
	if err != nil {
		return fmt.Errorf("%s: %w", q.Name, err)
	}
	for rows.Next() {
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", q.Name, err)
	}
	return nil
}

// Completed counts the queries of set completed in committed (the run's
// committed counts per type, named "q1" or, in a run of several client
// groups, "group/q1").
func (s Set) Completed(committed map[string]int64) int64 {
	names := make(map[string]bool, len(s))
	for _, q := range s {
		names[q.Name] = true
	}
	var n int64
	for name, c := range committed {
		if names[BaseName(name)] {
			n += c
		}
	}
	return n
}

// BaseName strips the client group from a transaction type name
// ("olap/q1" is "q1").
func BaseName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// QphH is queries per hour: completed queries × 3600 / elapsed seconds.
// Over s streams that each ran the 22 queries once it is the
// 22 × s × 3600 / elapsed of citus-benchmark and BenchBase's CH-benCHmark
// "QphH" (not TPC-H's QphH@Size, which combines a power and a throughput
// test).
func QphH(completed int64, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return math.Round(float64(completed)*3600/elapsed.Seconds()*10) / 10
}
