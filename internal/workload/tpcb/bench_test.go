package tpcb

import (
	"context"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
	"math/rand/v2"
	"os"
	"testing"
)

// BenchmarkDo measures one transaction per iteration against the test
// cluster (fsync off): use it for allocations and client CPU, not for tps.
func BenchmarkDo(b *testing.B) {
	dsn := loadertest.Loaded(b, newWorkload(b))
	for _, mode := range modes {
		for _, script := range scripts {
			b.Run(mode.String()+"/"+script, func(b *testing.B) {
				conn := pgtest.Connect(b, dsn, mode)
				w := newWorkload(b, "-b", script)
				wk := w.NewWorker(0, rand.New(rand.NewPCG(1, 2)))
				ctx, cancel := context.WithCancel(context.Background())
				if os.Getenv("BENCH_BG") != "" {
					ctx = context.Background()
				}
				defer cancel()
				if err := wk.Do(ctx, conn, 0); err != nil { // prepares
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := wk.Do(ctx, conn, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
