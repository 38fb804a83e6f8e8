//go:build linux

package dbgen

import (
	"io"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSF1 generates each whole table at scale factor 1 in COPY format to io.Discard, one
// goroutine, and reports lines per wall second, lines per CPU second (user+system, less
// sensitive to a shared machine) and the process's peak RSS (text pool included; the pool is
// built before timing). bench/tpch-dbgen.sh runs it.
func BenchmarkSF1(b *testing.B) {
	g := New(1)
	g.textPool()
	for _, tab := range []Table{LineItem, Orders, PartSupp, Part, Customer, Supplier} {
		b.Run(tab.String(), func(b *testing.B) {
			var lines int64
			cpu0 := cpuTime()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				n, err := g.Write(io.Discard, tab, 0, g.BaseRows(tab), COPY)
				if err != nil {
					b.Fatal(err)
				}
				lines += n
			}
			wall, cpu := time.Since(start), cpuTime()-cpu0
			b.ReportMetric(float64(lines)/wall.Seconds(), "lines/s")
			b.ReportMetric(float64(lines)/cpu.Seconds(), "lines/cpu-s")
			b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss << 10 // kB on Linux
}
