package sampler

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
	"golang.org/x/sys/unix"
)

// TestProcReadAgreesWithProcfs: the host sampler's own /proc reader reads
// what prometheus/procfs reads (the steady parts: CPUs, boot time, memory
// size, devices, this process's parent and start), opening each file for
// each read and keeping them open (read twice).
func TestProcReadAgreesWithProcfs(t *testing.T) {
	t.Parallel()
	fs, err := newProcFS()
	if err != nil {
		t.Skip(err)
	}
	agreeWithProcfs(t, fs)
	kept := fs.keepOpen()
	defer kept.close()
	agreeWithProcfs(t, kept)
	agreeWithProcfs(t, kept)
}

func agreeWithProcfs(t *testing.T, fs procFS) {
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
	// CPUStat stops after the CPU lines: the same CPUs, no boot time.
	cst, err := fs.CPUStat()
	if err != nil || len(cst.CPU) != len(pst.CPU) || cst.BootTime != 0 || cst.CPUTotal.User < pst.CPUTotal.User || cst.CPUTotal.Idle <= 0 {
		t.Errorf("CPU lines of stat: %d CPUs, boot %d, total %+v (%v); procfs: %d, %+v", len(cst.CPU), cst.BootTime, cst.CPUTotal, err, len(pst.CPU), pst.CPUTotal)
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
	ds, err := fs.ProcDiskstats(nil)
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
	if len(ds) > 0 {
		last := ds[len(ds)-1].DeviceName
		one, err := fs.ProcDiskstats(func(name []byte) bool { return string(name) == last })
		if err != nil || len(one) != 1 || one[0].DeviceName != last {
			t.Errorf("diskstats of %s alone: %+v (%v)", last, one, err)
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
			_, _ = fs.ProcDiskstats(nil)
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

// TestParseUint: parseUint is strconv.ParseUint's base 10, 64 bits.
func TestParseUint(t *testing.T) {
	for _, s := range []string{"0", "7", "0012", "18446744073709551615", "18446744073709551616", "1234567890123456789",
		"99999999999999999999", "", "-1", "+1", "1x", "1_000", " 1"} {
		v, err := parseUint([]byte(s))
		w, werr := strconv.ParseUint(s, 10, 64)
		if v != w || (err == nil) != (werr == nil) {
			t.Errorf("%q: %d, %v; strconv %d, %v", s, v, err, w, werr)
		}
	}
}

// TestKeptProcFilesStayFresh: a file kept open and read again from offset
// 0 shows what a fresh open shows: /proc/stat and this process's stat
// after CPU work, /proc/loadavg after a fork (its last pid), /proc/meminfo
// after touching memory. Each waits (bounded) until a fresh open sees a
// change, then the kept file must see one too.
//
// A change is judged on what the work moves for good, not on the whole
// text: a field that comes and goes (this process's state and last CPU,
// fields 3 and 39 of /proc/<pid>/stat, flip with its main thread) can show
// a fresh open a change and the kept file the old text again. No field of
// /proc/meminfo only grows: it is judged whole while 64 MiB more are in
// use, which the host would have to give back to the byte, in every field.
func TestKeptProcFilesStayFresh(t *testing.T) {
	fs, err := newProcFS()
	if err != nil {
		t.Skip(err)
	}
	kept := fs.keepOpen()
	defer kept.close()
	var sink []byte
	burn := func() {
		for i := range 1 << 20 {
			sink = append(sink[:0], byte(i))
		}
	}
	// touch maps 64 MiB and writes a byte per page, once: memory in use
	// until the test ends (the Go heap could reuse pages already touched).
	var mem []byte
	touch := func() {
		if mem != nil {
			return
		}
		if mem, err = unix.Mmap(-1, 0, 64<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = 1
		}
	}
	defer func() {
		if mem != nil {
			_ = unix.Munmap(mem)
		}
	}()
	fields := func(text string, from, to int) string { // fields from..to of the first line, from 1
		f := strings.Fields(strings.SplitN(text, "\n", 2)[0])
		return strings.Join(f[min(from-1, len(f)):min(to, len(f))], " ")
	}
	type change struct {
		do    func()
		moved func(text string) string // what do moves and nothing moves back
	}
	work := map[string]change{
		"stat": {burn, func(s string) string { return fields(s, 2, 4) }}, // user, nice, system ticks
		"loadavg": {func() { _ = exec.Command("true").Run() },
			func(s string) string { return fields(s, 5, 5) }}, // the last pid
		"meminfo": {touch, func(s string) string { return s }}, // whole: none of it only grows
	}
	work[strconv.Itoa(os.Getpid())+"/stat"] = change{burn, func(s string) string { // utime and stime, after the command name
		return fields(s[strings.LastIndexByte(s, ')')+1:], 12, 13)
	}}
	for name, w := range work {
		path := filepath.Join(procRoot, name)
		b, err := kept.read(path)
		if err != nil {
			t.Fatal(err)
		}
		before := w.moved(string(b))
		deadline := time.Now().Add(10 * time.Second)
		for {
			w.do()
			if fresh, err := os.ReadFile(path); err != nil || w.moved(string(fresh)) != before {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no change seen in 10 s", path)
			}
		}
		b, err = kept.read(path)
		if now := w.moved(string(b)); err != nil || now == before || now == "" {
			t.Errorf("%s kept open: %q, was %q (%v) after a fresh open saw a change", path, now, before, err)
		}
	}
	if len(kept.kept.fds) != len(work) {
		t.Errorf("%d files kept open, want %d", len(kept.kept.fds), len(work))
	}
}

// TestShortRecordReads: a seq_file of short records longer than a page
// (/proc/vmstat, a line per counter) is read whole with the diskstats
// rule, a read of under recordRoom ending it.
func TestShortRecordReads(t *testing.T) {
	const path = "/proc/vmstat"
	want, err := os.ReadFile(path)
	if err != nil || len(want) <= 4096 {
		t.Skipf("%s: %d bytes (%v), not over a page", path, len(want), err)
	}
	fd, err := openProc(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var buf []byte
	got, err := readAt0(fd, &buf, false, true, path)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := bytes.Count(got, []byte{'\n'}), bytes.Count(want, []byte{'\n'}); g != w || len(got) <= 4096 {
		t.Errorf("%d lines, %d bytes; os.ReadFile: %d lines", g, len(got), w)
	}
}
