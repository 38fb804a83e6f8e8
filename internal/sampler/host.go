package sampler

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pgarena/pgarena/internal/sampled"
	"github.com/pgarena/pgarena/internal/store"
)

// host samples this machine from /proc and /sys: CPU, load, memory,
// pgarena's own CPU and the block devices. Only the sampler's goroutine
// uses it.
type host struct {
	labels map[string]string // on every host sample

	proc    procFS
	self    proc
	cpuOff  bool
	memOff  bool
	diskOff bool
	notes   []string

	prevCPU  cpuStat
	prevSelf float64
	prevAt   time.Time
	haveCPU  bool

	disks    map[string]bool // whole devices to report
	prevDisk map[string]ioStats
	diskAt   time.Time
	diskKeys map[string]*diskKeys // by device
}

// diskKeys are one device's series names, made once.
type diskKeys struct {
	rPerS, wPerS, rkBPerS, wkBPerS, util, aquSz, rAwait, wAwait, await string
}

func newDiskKeys(dev string) *diskKeys {
	k := sampled.Disk + seriesWord(dev) + "."
	return &diskKeys{rPerS: k + "r_per_s", wPerS: k + "w_per_s", rkBPerS: k + "rkB_per_s", wkBPerS: k + "wkB_per_s",
		util: k + sampled.DiskUtilPct, aquSz: k + "aqu_sz", rAwait: k + "r_await_ms", wAwait: k + "w_await_ms", await: k + "await_ms"}
}

// skippedDevices are block devices that are not disks.
var skippedDevices = []string{"loop", "ram", "zram", "fd", "sr", "nbd"}

func newHost(dbLocal bool, dataDir string) *host {
	h := &host{labels: map[string]string{}}
	if dbLocal {
		h.labels["db_host"] = "true"
	}
	var err error
	if h.proc, err = newProcFS(); err != nil {
		h.cpuOff, h.memOff, h.diskOff = true, true, true
		h.notes = append(h.notes, "host: "+err.Error()+", skipped")
		return h
	}
	h.proc = h.proc.keepOpen() // the same files at every tick
	if h.self, err = h.proc.Self(); err != nil {
		h.notes = append(h.notes, "host_cpu: cannot read pgarena's own CPU: "+err.Error())
	}
	devs, err := h.proc.SysBlockDevices()
	if err != nil {
		h.diskOff = true
		h.notes = append(h.notes, "host_disk: cannot list block devices: "+err.Error()+", skipped")
		return h
	}
	h.disks, h.diskKeys = map[string]bool{}, map[string]*diskKeys{}
	for _, d := range devs {
		if !slices.ContainsFunc(skippedDevices, func(p string) bool { return strings.HasPrefix(d, p) }) {
			h.disks[d] = true
		}
	}
	if dataDir != "" {
		if dev, err := deviceOf(dataDir); err == nil && dev != "" {
			h.labels["data_dir_device"] = dev
		}
		// pg_wal may be a link to another device.
		if dev, err := deviceOf(filepath.Join(dataDir, "pg_wal")); err == nil && dev != "" {
			h.labels["wal_device"] = dev
		}
	}
	return h
}

// close closes the files the host sampler keeps open.
func (h *host) close() { h.proc.close() }

// deviceOf names the whole block device holding path ("vda" for a file on
// vda1), or "" when it is not on a block device (tmpfs, overlay).
func deviceOf(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", err
	}
	link := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		return "", nil // not a block device
	}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		real = filepath.Dir(real)
	}
	return filepath.Base(real), nil
}

func (h *host) sample(now time.Time) []store.Sample {
	var out []store.Sample
	for _, n := range h.notes {
		src := "host"
		if i := strings.IndexByte(n, ':'); i > 0 {
			src = n[:i]
		}
		out = append(out, noteSample(now, src, n, store.SeverityInfo))
	}
	h.notes = nil
	if !h.cpuOff {
		if s, ok := h.sampleCPU(now); ok {
			out = append(out, s)
		}
	}
	if !h.memOff {
		if s, ok := h.sampleMem(now); ok {
			out = append(out, s)
		}
	}
	if !h.diskOff {
		if s, ok := h.sampleDisks(now); ok {
			out = append(out, s)
		}
	}
	return out
}

func (h *host) labelled(now time.Time, source string, vals map[string]float64) store.Sample {
	var labels map[string]string
	if len(h.labels) > 0 {
		labels = make(map[string]string, len(h.labels))
		for k, v := range h.labels {
			labels[k] = v
		}
	}
	return store.Sample{Time: now, Source: source, Values: vals, Labels: labels}
}

func (h *host) skip(now time.Time, source string, err error) (store.Sample, bool) {
	return noteSample(now, source, source+": "+err.Error()+", skipped", store.SeverityInfo), true
}

func (h *host) sampleCPU(now time.Time) (store.Sample, bool) {
	st, err := h.proc.CPUStat()
	if err != nil {
		h.cpuOff = true
		return h.skip(now, "host_cpu", err)
	}
	var selfCPU float64
	haveSelf := false
	if h.self.PID != 0 {
		if ps, err := h.self.Stat(); err == nil {
			selfCPU, haveSelf = ps.CPUTime(), true
		}
	}
	at := time.Now()
	prev, prevSelf, prevAt, had := h.prevCPU, h.prevSelf, h.prevAt, h.haveCPU
	h.prevCPU, h.prevSelf, h.prevAt, h.haveCPU = st.CPUTotal, selfCPU, at, true
	vals := map[string]float64{}
	if la, err := h.proc.LoadAvg(); err == nil {
		vals["host.load1"], vals["host.load5"], vals["host.load15"] = la.Load1, la.Load5, la.Load15
	}
	if had {
		c, p := st.CPUTotal, prev
		user := c.User + c.Nice - p.User - p.Nice
		sys := c.System + c.IRQ + c.SoftIRQ - p.System - p.IRQ - p.SoftIRQ
		iowait := c.Iowait - p.Iowait
		steal := c.Steal - p.Steal
		idle := c.Idle - p.Idle
		total := user + sys + iowait + steal + idle
		if total > 0 {
			vals[sampled.CPUUserPct] = 100 * user / total
			vals[sampled.CPUSysPct] = 100 * sys / total
			vals[sampled.CPUIOWaitPct] = 100 * iowait / total
			vals[sampled.CPUStealPct] = 100 * steal / total
			vals[sampled.CPUIdlePct] = 100 * idle / total
			vals[sampled.CPUBusyPct] = 100 * (user + sys + steal) / total
		}
		secs := at.Sub(prevAt).Seconds()
		if ncpu := len(st.CPU); haveSelf && secs > 0 && ncpu > 0 {
			cores := (selfCPU - prevSelf) / secs
			vals[sampled.PgarenaCores] = cores
			vals[sampled.PgarenaCPUPct] = 100 * cores / float64(ncpu)
		}
	}
	return h.labelled(now, "host_cpu", vals), true
}

func (h *host) sampleMem(now time.Time) (store.Sample, bool) {
	mi, err := h.proc.Meminfo()
	if err != nil {
		h.memOff = true
		return h.skip(now, "host_mem", err)
	}
	if mi.MemTotalBytes == nil || mi.MemAvailableBytes == nil {
		h.memOff = true
		return noteSample(now, "host_mem", "host_mem: MemTotal or MemAvailable missing from /proc/meminfo, skipped", store.SeverityInfo), true
	}
	total, avail := float64(*mi.MemTotalBytes), float64(*mi.MemAvailableBytes)
	vals := map[string]float64{
		sampled.MemTotalBytes:     total,
		sampled.MemAvailableBytes: avail,
		sampled.MemUsedBytes:      total - avail,
	}
	if total > 0 {
		vals[sampled.MemUsedPct] = 100 * (total - avail) / total
	}
	return h.labelled(now, "host_mem", vals), true
}

func (h *host) sampleDisks(now time.Time) (store.Sample, bool) {
	stats, err := h.proc.ProcDiskstats(func(name []byte) bool { return h.disks[string(name)] })
	if err != nil {
		h.diskOff = true
		return h.skip(now, "host_disk", err)
	}
	at := time.Now()
	cur := map[string]ioStats{}
	for _, d := range stats {
		if h.disks[d.DeviceName] {
			cur[d.DeviceName] = d.IOStats
		}
	}
	prev, prevAt := h.prevDisk, h.diskAt
	h.prevDisk, h.diskAt = cur, at
	if prev == nil {
		return store.Sample{}, false
	}
	secs := at.Sub(prevAt).Seconds()
	if secs <= 0 {
		return store.Sample{}, false
	}
	vals := map[string]float64{}
	for name, c := range cur {
		p, ok := prev[name]
		if !ok || c.ReadIOs+c.WriteIOs == 0 || c.ReadIOs < p.ReadIOs || c.WriteIOs < p.WriteIOs {
			continue // new, never used, or counters wrapped
		}
		k := h.diskKeys[name]
		if k == nil {
			k = newDiskKeys(name)
			h.diskKeys[name] = k
		}
		dr, dw := float64(c.ReadIOs-p.ReadIOs), float64(c.WriteIOs-p.WriteIOs)
		drt, dwt := float64(c.ReadTicks-p.ReadTicks), float64(c.WriteTicks-p.WriteTicks)
		vals[k.rPerS] = dr / secs
		vals[k.wPerS] = dw / secs
		vals[k.rkBPerS] = float64(c.ReadSectors-p.ReadSectors) * 512 / 1024 / secs
		vals[k.wkBPerS] = float64(c.WriteSectors-p.WriteSectors) * 512 / 1024 / secs
		vals[k.util] = min(100, float64(c.IOsTotalTicks-p.IOsTotalTicks)/(secs*1000)*100)
		vals[k.aquSz] = float64(c.WeightedIOTicks-p.WeightedIOTicks) / (secs * 1000)
		vals[k.rAwait], vals[k.wAwait], vals[k.await] = 0, 0, 0
		if dr > 0 {
			vals[k.rAwait] = drt / dr
		}
		if dw > 0 {
			vals[k.wAwait] = dwt / dw
		}
		if dr+dw > 0 {
			vals[k.await] = (drt + dwt) / (dr + dw)
		}
	}
	return h.labelled(now, "host_disk", vals), true
}
