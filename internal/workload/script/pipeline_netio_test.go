package script

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestLongPipelinesInEveryNetIOMode runs a script whose \startpipeline
// queues thousands of statements, requests and answers larger than
// the sockets' buffers and a \syncpipeline midway, through the driver as
// `pgarena run script -f` does, in every --net-io mode and under
// -M extended and prepared. A deadlock fails the test at the run's
// deadline.
func TestLongPipelinesInEveryNetIOMode(t *testing.T) {
	dsn := pgtest.DSN(t)
	var b strings.Builder
	pad := strings.Repeat("q", 1500)
	b.WriteString("\\set n random(1, 1000)\n\\startpipeline\nselect pg_sleep(0.05);\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "select '%s%d' || :n;\n", pad, i)
		if i == 1000 {
			b.WriteString("\\syncpipeline\n")
		}
	}
	b.WriteString("select repeat('r', 3000000);\n\\endpipeline\n")
	file := filepath.Join(t.TempDir(), "pipeline.sql")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, io := range []netio.Mode{netio.Raw, netio.Blocking, netio.Std} {
		for _, qm := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeCacheStatement} {
			t.Run(fmt.Sprintf("%s/%v", io, qm), func(t *testing.T) {
				w := NewWorkload()
				if err := w.Flags().Parse([]string{"-f", file}); err != nil {
					t.Fatal(err)
				}
				if err := w.Validate(); err != nil {
					t.Fatal(err)
				}
				w.SetSeed(1)
				w.SetThreads(1)
				if err := w.ValidateRun(2); err != nil {
					t.Fatal(err)
				}
				cfg, err := pgx.ParseConfig(dsn)
				if err != nil {
					t.Fatal(err)
				}
				cfg.DefaultQueryExecMode = qm
				netio.Apply(&cfg.Config, io)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				rec := metrics.NewRecorder(w.TxTypes(), time.Now())
				var acc metrics.Accumulator
				done := make(chan error, 1)
				go func() {
					_, err := driver.Run(ctx, w, func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, cfg) },
						driver.Config{Clients: 2, Transactions: 3, Tick: 50 * time.Millisecond, OnInterval: acc.Add}, rec)
					done <- err
				}()
				select {
				case err = <-done:
				case <-time.After(70 * time.Second):
					t.Fatal("the run did not end within 70 s")
				}
				if err != nil {
					t.Fatal(err)
				}
				var sum metrics.Summary
				acc.Fill(&sum)
				if sum.Transactions != 6 || sum.Failed != 0 {
					t.Fatalf("%d transactions, %d failed; want 6 and none", sum.Transactions, sum.Failed)
				}
			})
		}
	}
}
