package all_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/all"
)

func TestMain(m *testing.M) {
	all.Register()
	os.Exit(pgtest.Main(m))
}

// TestEveryWorkload loads every registered workload with its default
// parameters (made small by Meta.TestFlags), runs it briefly under each query protocol and checks its
// consistency after each run: adding a workload to the registry is enough
// to have it tested end to end.
func TestEveryWorkload(t *testing.T) {
	all := workload.All()
	if len(all) == 0 {
		t.Fatal("no workload registered")
	}
	for _, meta := range all {
		t.Run(meta.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cfg, err := target.ParseDSN(pgtest.DSN(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			w := meta.New()
			if err := w.Validate(); err != nil {
				t.Fatalf("defaults do not validate: %v", err)
			}
			if len(meta.TestFlags) > 0 {
				fl, ok := w.(workload.Flagser)
				if !ok {
					t.Fatalf("TestFlags %v but no flags", meta.TestFlags)
				}
				if err := fl.Flags().Parse(meta.TestFlags); err != nil {
					t.Fatalf("TestFlags: %v", err)
				}
				if err := w.Validate(); err != nil {
					t.Fatalf("TestFlags do not validate: %v", err)
				}
			}
			dial := func(ctx context.Context) (*pgx.Conn, error) { return target.Connect(ctx, cfg, "") }
			if _, err := loader.Init(ctx, dial, w, loader.Options{Workers: 2}); err != nil {
				t.Fatalf("init: %v", err)
			}
			conn, err := dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			check := func(when string) {
				c, ok := w.(workload.Checker)
				if !ok {
					return
				}
				if p, ok := w.(workload.Preparer); ok {
					if err := p.Prepare(ctx, conn); err != nil {
						t.Fatalf("prepare %s: %v", when, err)
					}
				}
				if err := c.Check(ctx, conn); err != nil {
					var note *workload.CheckNote
					if !errors.As(err, &note) {
						t.Fatalf("check %s: %v", when, err)
					}
				}
			}
			check("after init")
			for _, mode := range target.QueryModes {
				qm, _ := target.ParseQueryMode(mode)
				runCfg := cfg.Copy()
				runCfg.DefaultQueryExecMode = qm
				rec := metrics.NewRecorder(w.TxTypes(), time.Now())
				var acc metrics.Accumulator
				_, err := driver.Run(ctx, w, func(ctx context.Context) (*pgx.Conn, error) {
					return pgx.ConnectConfig(ctx, runCfg)
				}, driver.Config{Clients: 2, Duration: 700 * time.Millisecond, Tick: 100 * time.Millisecond,
					OnInterval: acc.Add}, rec)
				if err != nil {
					t.Fatalf("%s: run: %v", mode, err)
				}
				var sum metrics.Summary
				acc.Fill(&sum)
				if sum.Transactions == 0 {
					t.Fatalf("%s: no transaction committed (failed %d: %v)", mode, sum.Failed, sum.Errors)
				}
				if sum.Failed > sum.Transactions/10 {
					t.Fatalf("%s: %d of %d transactions failed: %v", mode, sum.Failed, sum.Transactions+sum.Failed, sum.Errors)
				}
				check("after a " + mode + " run")
			}
		})
	}
}
