//go:build linux

package netio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// pgconnIn opens a pgconn connection in mode m over transport.
func pgconnIn(t *testing.T, dsn, transport string, m Mode) *pgconn.PgConn {
	t.Helper()
	return connect(t, dsn, transport, m).PgConn()
}

// eachModeAll runs f for every mode, std included, and transport.
func eachModeAll(t *testing.T, f func(t *testing.T, m Mode, transport string)) {
	for _, m := range []Mode{Raw, Blocking, Std} {
		for _, tr := range transports {
			t.Run(string(m)+"/"+tr, func(t *testing.T) { f(t, m, tr) })
		}
	}
}

// readResults reads n results of echo statements and the pipeline's sync,
// checking each row is param(i) for i from first.
func readResults(t *testing.T, p *pgconn.Pipeline, first, n int, param func(int) string) {
	t.Helper()
	for i := first; i < first+n; i++ {
		res, err := p.GetResults()
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		rr, ok := res.(*pgconn.ResultReader)
		if !ok {
			t.Fatalf("result %d: %T", i, res)
		}
		r := rr.Read()
		if r.Err != nil || len(r.Rows) != 1 || string(r.Rows[0][0]) != param(i) {
			t.Fatalf("result %d: %d rows, %v", i, len(r.Rows), r.Err)
		}
	}
}

func readSync(t *testing.T, p *pgconn.Pipeline) {
	t.Helper()
	res, err := p.GetResults()
	if _, ok := res.(*pgconn.PipelineSync); err != nil || !ok {
		t.Fatalf("want the pipeline's sync, got %T, %v", res, err)
	}
}

// TestPipelines: pgconn pipelines of thousands of statements whose
// parameters and answers are larger than the sockets' buffers, against a
// server that at first answers nothing (it sleeps) while the client keeps
// writing; small writes (a Sync, a few statements) kept while the send
// buffer is full or while answers to earlier statements are arriving.
// Every mode; a deadlock fails the test at the context's deadline.
func TestPipelines(t *testing.T) {
	dsn := pgtest.DSN(t)
	param := func(i int) string { return fmt.Sprintf("%06d", i) + strings.Repeat("p", 2000) }
	eachModeAll(t, func(t *testing.T, m Mode, transport string) {
		pc := pgconnIn(t, dsn, transport, m)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		within(t, 70*time.Second, "the pipelines", func() {
			for round := range 3 {
				p := pc.StartPipeline(ctx)
				p.SendQueryParams("select pg_sleep(0.2)", nil, nil, nil, nil)
				const n = 3000 // ~6 MB each way
				for i := range n {
					p.SendQueryParams("select $1::text", [][]byte{[]byte(param(i))}, nil, nil, nil)
				}
				if err := p.Flush(); err != nil {
					t.Fatalf("round %d: flush: %v", round, err)
				}
				// Kept: the send buffer may be full, the server is
				// writing answers.
				p.SendQueryParams("select $1::text", [][]byte{[]byte(param(n))}, nil, nil, nil)
				if err := p.Sync(); err != nil {
					t.Fatalf("round %d: sync: %v", round, err)
				}
				if _, err := p.GetResults(); err != nil { // pg_sleep
					t.Fatalf("round %d: %v", round, err)
				}
				readResults(t, p, 0, 100, param)
				// More while a few MB of answers are pending.
				for i := n + 1; i < n+5; i++ {
					p.SendQueryParams("select $1::text", [][]byte{[]byte(param(i))}, nil, nil, nil)
				}
				if err := p.Sync(); err != nil {
					t.Fatalf("round %d: second sync: %v", round, err)
				}
				readResults(t, p, 100, n+1-100, param)
				readSync(t, p)
				readResults(t, p, n+1, 4, param)
				readSync(t, p)
				if err := p.Close(); err != nil {
					t.Fatalf("round %d: close: %v", round, err)
				}
			}
		})
		if err := pc.Exec(ctx, "select 1").Close(); err != nil {
			t.Fatalf("after the pipelines: %v", err)
		}
	})
}

// TestPipelineOfLargeAnswers: a pipeline whose statements are short but
// whose answers fill the sockets' buffers, so that the server is blocked
// writing them when the client's Sync (a small write, kept) goes out and
// the client starts reading: the answers are there before the Read, and no
// more come until it reads. A Read that waited for them first, without
// reading, would wait forever.
func TestPipelineOfLargeAnswers(t *testing.T) {
	dsn := pgtest.DSN(t)
	const size = 100000
	big := func(int) string { return strings.Repeat("a", size) }
	eachModeAll(t, func(t *testing.T, m Mode, transport string) {
		pc := pgconnIn(t, dsn, transport, m)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		within(t, 40*time.Second, "the pipelines", func() {
			for round := range 10 {
				p := pc.StartPipeline(ctx)
				const n = 100 // 10 MB of answers to 5 KB of statements
				for range n {
					p.SendQueryParams("select repeat('a', $1::int)", [][]byte{[]byte(fmt.Sprint(size))}, nil, nil, nil)
				}
				if err := p.Flush(); err != nil {
					t.Fatalf("round %d: flush: %v", round, err)
				}
				time.Sleep(20 * time.Millisecond) // the server fills the buffers
				if err := p.Sync(); err != nil {
					t.Fatalf("round %d: sync: %v", round, err)
				}
				readResults(t, p, 0, n, big)
				readSync(t, p)
				if err := p.Close(); err != nil {
					t.Fatalf("round %d: close: %v", round, err)
				}
			}
		})
	})
}

// TestCopy: COPY FROM STDIN and TO STDOUT of more than the sockets'
// buffers, with small statements around them, in every mode.
func TestCopy(t *testing.T) {
	dsn := pgtest.DSN(t)
	eachModeAll(t, func(t *testing.T, m Mode, transport string) {
		pc := pgconnIn(t, dsn, transport, m)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		table := "copy_" + string(m) + "_" + transport
		within(t, 70*time.Second, "COPY", func() {
			if err := pc.Exec(ctx, "create temp table "+table+" (i int, s text)").Close(); err != nil {
				t.Fatal(err)
			}
			var in bytes.Buffer
			const rows = 20000
			for i := range rows {
				fmt.Fprintf(&in, "%d\t%s\n", i, strings.Repeat("c", 500))
			}
			tag, err := pc.CopyFrom(ctx, &in, "copy "+table+" from stdin")
			if err != nil || tag.RowsAffected() != rows {
				t.Fatalf("copy from: %v, %v", tag, err)
			}
			var out countingWriter
			tag, err = pc.CopyTo(ctx, &out, "copy "+table+" to stdout")
			if err != nil || tag.RowsAffected() != rows || out.n < rows*500 {
				t.Fatalf("copy to: %v, %d bytes, %v", tag, out.n, err)
			}
			// A COPY the server fails midway: its error, then a usable
			// connection.
			bad := io.MultiReader(strings.NewReader("1\tok\nx\tbad\n"), strings.NewReader(strings.Repeat("2\tmore\n", 100000)))
			if _, err := pc.CopyFrom(ctx, bad, "copy "+table+" from stdin"); err == nil || !strings.Contains(err.Error(), "22P02") {
				t.Fatalf("bad copy: %v, want SQLSTATE 22P02", err)
			}
			if err := pc.Exec(ctx, "select 1").Close(); err != nil {
				t.Fatalf("after copy: %v", err)
			}
		})
	})
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// TestWaitFirstWithPostgreSQL: a held client's round trips with a real
// server still wait first (the answers end with ReadyForQuery and empty the
// socket), in the netpoller when the Hold does not take the wait: slow
// answers cost almost no reads that find nothing.
func TestWaitFirstWithPostgreSQL(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			pc := connectHold(t, dsn, tr, Raw, fullHold()).PgConn()
			rc, ok := pc.Conn().(*rawConn)
			if !ok {
				t.Fatalf("connection is %T, want raw", pc.Conn())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			const n = 200
			trips, eagain := rc.trips, rc.eagain
			for range n {
				if err := pc.Exec(ctx, "select pg_sleep(0.001)").Close(); err != nil {
					t.Fatal(err)
				}
			}
			if got := rc.trips - trips; got != n {
				t.Errorf("%d of %d round trips could wait first, want all", got, n)
			}
			if got := rc.eagain - eagain; got > n/4 {
				t.Errorf("%d reads found nothing in %d slow round trips, want few", got, n)
			}
		})
	}
}
