package sampler

import (
	"os"
	"slices"
	"testing"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// TestProcReadAgreesWithProcfs: the host sampler's own /proc reader reads
// what prometheus/procfs reads (the steady parts: CPUs, boot time, memory
// size, devices, this process's parent and start).
func TestProcReadAgreesWithProcfs(t *testing.T) {
	t.Parallel()
	fs, err := newProcFS()
	if err != nil {
		t.Skip(err)
	}
	pfs, err := procfs.NewFS(procfs.DefaultMountPoint)
	if err != nil {
		t.Fatal(err)
	}
	// procfs reads first: counters only grow, ours are at least its.
	pst, err := pfs.Stat()
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.CPU) != len(pst.CPU) || st.BootTime != pst.BootTime || st.CPUTotal.User < pst.CPUTotal.User || st.CPUTotal.Idle <= 0 {
		t.Errorf("stat: %d CPUs, boot %d, total %+v; procfs: %d, %d, %+v", len(st.CPU), st.BootTime, st.CPUTotal, len(pst.CPU), pst.BootTime, pst.CPUTotal)
	}
	mi, err := fs.Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	pmi, err := pfs.Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	if mi.MemTotalBytes == nil || mi.MemAvailableBytes == nil || *mi.MemTotalBytes != *pmi.MemTotalBytes {
		t.Errorf("meminfo: %v; procfs: %v", mi, pmi)
	}
	if la, err := fs.LoadAvg(); err != nil || la.Load1 < 0 {
		t.Errorf("loadavg: %+v, %v", la, err)
	}
	pp, err := pfs.Self()
	if err != nil {
		t.Fatal(err)
	}
	pps, err := pp.Stat()
	if err != nil {
		t.Fatal(err)
	}
	self, err := fs.Self()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := self.Stat()
	if err != nil {
		t.Fatal(err)
	}
	start, err := ps.StartTime()
	if err != nil {
		t.Fatal(err)
	}
	pstart, _ := pps.StartTime()
	if ps.PPID != os.Getppid() || ps.PPID != pps.PPID || start != pstart || ps.CPUTime() < pps.CPUTime() {
		t.Errorf("self: ppid %d, start %v, cpu %v; procfs: %d, %v, %v", ps.PPID, start, ps.CPUTime(), pps.PPID, pstart, pps.CPUTime())
	}
	bfs, err := blockdevice.NewFS(procfs.DefaultMountPoint, "/sys")
	if err != nil {
		t.Fatal(err)
	}
	devs, err := fs.SysBlockDevices()
	if err != nil {
		t.Fatal(err)
	}
	pdevs, err := bfs.SysBlockDevices()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(devs, pdevs) {
		t.Errorf("block devices %v; procfs: %v", devs, pdevs)
	}
	pds, err := bfs.ProcDiskstats()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := fs.ProcDiskstats()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != len(pds) {
		t.Fatalf("%d disks; procfs: %d", len(ds), len(pds))
	}
	for i := range ds {
		d, p := ds[i], pds[i]
		if d.DeviceName != p.DeviceName || d.IOStats.ReadIOs < p.ReadIOs || d.IOStats.WriteSectors < p.WriteSectors || d.IOStats.WeightedIOTicks < p.WeightedIOTicks {
			t.Errorf("disk %d: %+v; procfs: %s %+v", i, d, p.DeviceName, p.IOStats)
		}
	}
}

// BenchmarkHostFiles reads what one host sample reads, with this package's
// reader and with procfs (allocations are the load-independent figure).
func BenchmarkHostFiles(b *testing.B) {
	fs, err := newProcFS()
	if err != nil {
		b.Skip(err)
	}
	pfs, _ := procfs.NewFS(procfs.DefaultMountPoint)
	bfs, _ := blockdevice.NewFS(procfs.DefaultMountPoint, "/sys")
	self, _ := fs.Self()
	pself, _ := pfs.Self()
	b.Run("procread", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = fs.Stat()
			_, _ = self.Stat()
			_, _ = fs.LoadAvg()
			_, _ = fs.Meminfo()
			_, _ = fs.ProcDiskstats()
		}
	})
	b.Run("procfs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = pfs.Stat()
			_, _ = pself.Stat()
			_, _ = pfs.LoadAvg()
			_, _ = pfs.Meminfo()
			_, _ = bfs.ProcDiskstats()
		}
	})
}
