package session

import (
	"context"
	"time"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/store"
)

// segmentClients is how many clients this process runs: its segment's
// share of each group (see driver.Segment), at the most clients of a sweep.
func (s *Spec) segmentClients() int {
	if s.Segment.Whole() {
		return s.totalClients()
	}
	n := 0
	for i, g := range s.Groups {
		c := g.Clients
		if i == 0 {
			c = s.maxClients()
		}
		lo, hi := s.Segment.Block(c)
		n += hi - lo
	}
	return n
}

// recordSegment completes the run spec of a segment.
func (s *Spec) recordSegment(rs *store.RunSpec) {
	if s.Segment.Whole() {
		return
	}
	rs.Segment = s.Segment.String()
	rs.SegmentOf = s.SegmentOf
	rs.StartAt = s.StartAt
	rs.WholeClients = s.totalClients()
	rs.Clients = s.segmentClients()
}

// clockOffset measures the server's clock against this machine's: the
// server's clock_timestamp() minus the local time at the query's midpoint,
// and the round trip, in milliseconds.
func clockOffset(ctx context.Context, conn pgtext.Querier) (offsetMS, rttMS float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	best := time.Duration(-1)
	for range 3 { // the shortest round trip bounds the error best
		var us int64 // read as a number: no text form of a time to parse
		t0 := time.Now()
		if err := conn.QueryRow(ctx, "select (extract(epoch from clock_timestamp()) * 1000000)::int8").Scan(&us); err != nil {
			return 0, 0, err
		}
		srv := time.UnixMicro(us)
		t1 := time.Now()
		if rtt := t1.Sub(t0); best < 0 || rtt < best {
			best = rtt
			mid := t0.Add(rtt / 2)
			offsetMS = float64(srv.Sub(mid).Microseconds()) / 1000
		}
	}
	return offsetMS, float64(best.Microseconds()) / 1000, nil
}
