package sampler

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// procFS reads the few files of /proc and /sys that the host and Citus
// samplers use (proc(5)), with the names prometheus/procfs gives them.
// That library's package initialisation (its regexps) cost every command
// ~0.55 M instructions, sampler or not.
//
// Files are read with raw system calls, not through os.File, whose open
// adds two fcntl calls and an epoll registration (refused by /proc) to
// each read. A procFS made by keepOpen keeps each file it reads open and
// reads it again from offset 0 (pread): procfs files are seq_files, which
// make their text afresh on a read at offset 0 (fs/seq_file.c), so a
// sample costs one or two system calls per file instead of about eight.
type procFS struct {
	proc, sys string
	kept      *keptFiles // nil: open and close each file at each read
}

// keptFiles are the open files of a procFS made by keepOpen, by path, and
// the buffer they are read into. One goroutine at a time uses them.
type keptFiles struct {
	fds   map[string]int
	paths map[string]string // /proc/name by name
	buf   []byte
}

// procRoot is where procfs is mounted.
const procRoot = "/proc"

// newProcFS checks that /proc can be read.
func newProcFS() (procFS, error) {
	fs := procFS{proc: procRoot, sys: "/sys"}
	if _, err := os.Stat(filepath.Join(fs.proc, "stat")); err != nil {
		return procFS{}, fmt.Errorf("cannot read %s: %w", fs.proc, err)
	}
	return fs, nil
}

// keepOpen returns fs keeping the files it reads open until close: for a
// sampler that reads the same files at every tick.
func (fs procFS) keepOpen() procFS {
	fs.kept = &keptFiles{fds: map[string]int{}, paths: map[string]string{}}
	return fs
}

// close closes the files kept open.
func (fs procFS) close() {
	if fs.kept == nil {
		return
	}
	for path, fd := range fs.kept.fds {
		_ = unix.Close(fd)
		delete(fs.kept.fds, path)
	}
}

// wholeRead says whether a single_open (fs/seq_file.c) makes the file
// named name in one piece, so that a read shorter than the buffer is all of
// it; others (diskstats, a record per device) are cut at a page: their
// reads are complete at a short read of less than recordRoom when their
// records are short (shortRecords, readAt0), else at EOF.
func wholeRead(name string) (whole, shortRecords bool) {
	switch name {
	case "stat", "meminfo", "loadavg": // /proc/stat and /proc/<pid>/stat
		return true, false
	case "diskstats":
		return false, true
	}
	return false, false
}

// read returns the contents of path, valid until the next read.
func (fs procFS) read(path string) ([]byte, error) {
	whole, short := wholeRead(filepath.Base(path))
	if fs.kept == nil {
		fd, err := openProc(path)
		if err != nil {
			return nil, err
		}
		defer unix.Close(fd)
		var buf []byte
		return readAt0(fd, &buf, whole, short, path)
	}
	fd, ok := fs.kept.fds[path]
	if !ok {
		var err error
		if fd, err = openProc(path); err != nil {
			return nil, err
		}
		fs.kept.fds[path] = fd
	}
	b, err := readAt0(fd, &fs.kept.buf, whole, short, path)
	if err != nil { // the file may be gone (an exited process): open anew next time
		_ = unix.Close(fd)
		delete(fs.kept.fds, path)
	}
	return b, err
}

func openProc(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// recordRoom: a read of a seq_file made of records (fs/seq_file.c,
// seq_read_iter) fills a kernel buffer of at least a page record by
// record and stops early only at the end or when the next record does
// not fit; so when records are shorter than half a page (a diskstats
// line is under 500 bytes), a read that returns less than that, into a
// buffer it did not fill, ended at the end.
const recordRoom = 2048

// readAt0 reads fd from offset 0 into *buf (grown as needed) until EOF, or
// until a short read when whole, or a read shorter than recordRoom when
// shortRecords. The reads are raw system calls: a procfs file is made in
// memory, never waited for, and a raw call does not wake the runtime's
// sysmon thread as a Syscall does when the process was idle.
func readAt0(fd int, buf *[]byte, whole, shortRecords bool, path string) ([]byte, error) {
	if len(*buf) == 0 {
		*buf = make([]byte, 8<<10)
	}
	n := 0
	for {
		if n == len(*buf) {
			*buf = append(*buf, make([]byte, len(*buf))...)
		}
		p := (*buf)[n:]
		m, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(n), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return nil, &os.PathError{Op: "read", Path: path, Err: e}
		}
		n += int(m)
		if short := n < len(*buf); m == 0 || short && (whole || shortRecords && m < recordRoom) {
			return (*buf)[:n], nil
		}
	}
}

// parseUint is strconv.ParseUint(string(b), 10, 64) without making the
// string: a tick parses ~50 numbers.
func parseUint(b []byte) (uint64, error) {
	if len(b) == 0 || len(b) > 19 {
		return strconv.ParseUint(string(b), 10, 64) // its error, or a long number
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return strconv.ParseUint(string(b), 10, 64)
		}
		v = v*10 + uint64(c-'0')
	}
	return v, nil
}

// cpuStat is one line of /proc/stat's CPU times, in seconds.
type cpuStat struct{ User, Nice, System, Idle, Iowait, IRQ, SoftIRQ, Steal float64 }

// procStat is what the samplers read of /proc/stat.
type procStat struct {
	CPUTotal cpuStat   // the "cpu" line
	CPU      []cpuStat // "cpu0", "cpu1"...
	BootTime uint64    // btime, seconds since the epoch
}

// Stat reads /proc/stat.
func (fs procFS) Stat() (procStat, error) { return fs.stat(true) }

// CPUStat reads the CPU lines of /proc/stat, not its BootTime: it stops
// at the first line after them (the kernel writes them first, in a run),
// before the interrupt counts.
func (fs procFS) CPUStat() (procStat, error) { return fs.stat(false) }

func (fs procFS) stat(boot bool) (procStat, error) {
	var st procStat
	want := func(line []byte) (bool, bool) { // the kernel starts these lines in column 0
		cpu := bytes.HasPrefix(line, []byte("cpu"))
		if !boot && !cpu && len(st.CPU) > 0 {
			return false, true // the first line after the CPUs'
		}
		return cpu || bytes.HasPrefix(line, []byte("btime ")), false
	}
	err := fs.lines("stat", want, func(f [][]byte) error {
		switch {
		case string(f[0]) == "btime" && len(f) > 1:
			v, err := parseUint(f[1])
			st.BootTime = v
			return err
		case string(f[0]) == "cpu":
			c, err := parseCPU(f)
			st.CPUTotal = c
			return err
		default: // cpuN
			c, err := parseCPU(f)
			st.CPU = append(st.CPU, c)
			return err
		}
	})
	return st, err
}

// parseCPU reads "cpuN user nice system idle iowait irq softirq steal ..."
// (ticks; older kernels stop before steal).
func parseCPU(f [][]byte) (cpuStat, error) {
	var v [8]float64
	for i := 1; i < len(f) && i <= len(v); i++ {
		n, err := parseUint(f[i])
		if err != nil {
			return cpuStat{}, fmt.Errorf("/proc/stat %s: %w", f[0], err)
		}
		v[i-1] = float64(n) / clockTicks
	}
	return cpuStat{User: v[0], Nice: v[1], System: v[2], Idle: v[3], Iowait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
}

// loadAvg is /proc/loadavg's first three fields.
type loadAvg struct{ Load1, Load5, Load15 float64 }

// LoadAvg reads /proc/loadavg.
func (fs procFS) LoadAvg() (loadAvg, error) {
	b, err := fs.read(fs.path("loadavg"))
	if err != nil {
		return loadAvg{}, err
	}
	var buf [5][]byte
	f := appendFields(buf[:0], b, 3)
	if len(f) < 3 {
		return loadAvg{}, fmt.Errorf("/proc/loadavg: %q", b)
	}
	var v [3]float64
	for i := range v {
		if v[i], err = strconv.ParseFloat(string(f[i]), 64); err != nil {
			return loadAvg{}, fmt.Errorf("/proc/loadavg: %w", err)
		}
	}
	return loadAvg{v[0], v[1], v[2]}, nil
}

// meminfo is what the samplers read of /proc/meminfo; nil: not there.
type meminfo struct{ MemTotalBytes, MemAvailableBytes *uint64 }

// Meminfo reads /proc/meminfo ("MemTotal: 24578424 kB").
func (fs procFS) Meminfo() (meminfo, error) {
	var mi meminfo
	want := func(line []byte) (bool, bool) { // in column 0
		return bytes.HasPrefix(line, []byte("MemTotal:")) || bytes.HasPrefix(line, []byte("MemAvailable:")), false
	}
	err := fs.lines("meminfo", want, func(f [][]byte) error {
		var dst **uint64
		switch string(f[0]) {
		case "MemTotal:":
			dst = &mi.MemTotalBytes
		case "MemAvailable:":
			dst = &mi.MemAvailableBytes
		default:
			return nil
		}
		if len(f) < 2 {
			return fmt.Errorf("/proc/meminfo: %s without a value", f[0])
		}
		v, err := parseUint(f[1])
		if err != nil {
			return fmt.Errorf("/proc/meminfo %s %w", f[0], err)
		}
		if len(f) > 2 && string(f[2]) == "kB" {
			v *= 1024
		}
		*dst = &v
		if mi.MemTotalBytes != nil && mi.MemAvailableBytes != nil {
			return errDone // the rest is not read
		}
		return nil
	})
	return mi, err
}

// proc is one process of /proc.
type proc struct {
	fs   procFS
	PID  int
	stat string // its stat file's path
}

// Self is pgarena's own process.
func (fs procFS) Self() (proc, error) { return fs.Proc(os.Getpid()) }

// Proc is process pid, if /proc has it.
func (fs procFS) Proc(pid int) (proc, error) {
	if _, err := os.Stat(filepath.Join(fs.proc, strconv.Itoa(pid))); err != nil {
		return proc{}, err
	}
	return proc{fs: fs, PID: pid, stat: filepath.Join(fs.proc, strconv.Itoa(pid), "stat")}, nil
}

// pidStat is what the samplers read of /proc/<pid>/stat.
type pidStat struct {
	fs           procFS
	PPID         int
	UTime, STime uint64 // ticks
	Starttime    uint64 // ticks after boot
}

// Stat reads /proc/<pid>/stat (fields 4, 14, 15 and 22, counted after the
// command name in parentheses, which may hold spaces).
func (p proc) Stat() (pidStat, error) {
	path := p.stat
	if path == "" {
		path = filepath.Join(p.fs.proc, strconv.Itoa(p.PID), "stat")
	}
	b, err := p.fs.read(path)
	if err != nil {
		return pidStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return pidStat{}, fmt.Errorf("%s: no command name", path)
	}
	var buf [20][]byte
	f := appendFields(buf[:0], b[i+1:], len(buf)) // fields 3 to 22
	if len(f) < 20 {
		return pidStat{}, fmt.Errorf("%s: %d fields", path, len(f)+2)
	}
	st := pidStat{fs: p.fs}
	var errs [4]error
	st.PPID, errs[0] = strconv.Atoi(string(f[1]))
	st.UTime, errs[1] = parseUint(f[11])
	st.STime, errs[2] = parseUint(f[12])
	st.Starttime, errs[3] = parseUint(f[19])
	if err := errors.Join(errs[:]...); err != nil {
		return pidStat{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// CPUTime is the process's user and system time, seconds.
func (s pidStat) CPUTime() float64 { return float64(s.UTime+s.STime) / clockTicks }

// StartTime is when the process started, seconds since the epoch.
func (s pidStat) StartTime() (float64, error) {
	st, err := s.fs.Stat()
	if err != nil {
		return 0, err
	}
	return float64(st.BootTime) + float64(s.Starttime)/clockTicks, nil
}

// ioStats are a block device's counters of /proc/diskstats (the kernel's
// Documentation/admin-guide/iostats.rst, fields 1 to 11).
type ioStats struct {
	ReadIOs, ReadMerges, ReadSectors, ReadTicks     uint64
	WriteIOs, WriteMerges, WriteSectors, WriteTicks uint64
	IOsInProgress, IOsTotalTicks, WeightedIOTicks   uint64
}

// diskstat is one line of /proc/diskstats.
type diskstat struct {
	DeviceName string
	IOStats    ioStats
}

// ProcDiskstats reads /proc/diskstats ("major minor name" and counters):
// the devices want accepts (nil: all).
func (fs procFS) ProcDiskstats(want func(name []byte) bool) ([]diskstat, error) {
	var out []diskstat
	var name func([]byte) (bool, bool) // the device's name, third field, is wanted
	if want != nil {
		name = func(line []byte) (bool, bool) { return want(field(line, 2)), false }
	}
	err := fs.lines("diskstats", name, func(f [][]byte) error {
		if len(f) < 14 {
			return nil
		}
		var v [11]uint64
		for i := range v {
			n, err := parseUint(f[3+i])
			if err != nil {
				return fmt.Errorf("/proc/diskstats %s: %w", f[2], err)
			}
			v[i] = n
		}
		out = append(out, diskstat{DeviceName: string(f[2]), IOStats: ioStats{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]}})
		return nil
	})
	return out, err
}

// SysBlockDevices lists /sys/block: the block devices.
func (fs procFS) SysBlockDevices() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(fs.sys, "block"))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// errDone, from lines' fn, ends the reading: what follows is not wanted.
var errDone = errors.New("done")

// path is /proc/name, joined once for a procFS that keeps its files open.
func (fs procFS) path(name string) string {
	if fs.kept == nil {
		return filepath.Join(fs.proc, name)
	}
	p, ok := fs.kept.paths[name]
	if !ok {
		p = filepath.Join(fs.proc, name)
		fs.kept.paths[name] = p
	}
	return p
}

// lines calls fn with the fields of each non-empty line of /proc/name
// that want keeps (nil: every line), until want says stop or fn returns
// errDone; the fields are valid during the call. Lines are split only when wanted: /proc/stat's intr line alone
// has a field per interrupt.
func (fs procFS) lines(name string, want func(line []byte) (keep, stop bool), fn func([][]byte) error) error {
	b, err := fs.read(fs.path(name))
	if err != nil {
		return err
	}
	var buf [32][]byte
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		if want != nil {
			if keep, stop := want(line); stop {
				return nil
			} else if !keep {
				continue
			}
		}
		if fields := appendFields(buf[:0], line, -1); len(fields) > 0 {
			if err := fn(fields); err == errDone {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}

// field is field i (from 0) of line, nil when it has fewer.
func field(line []byte, i int) []byte {
	var buf [8][]byte
	if f := appendFields(buf[:0], line, i+1); len(f) > i {
		return f[i]
	}
	return nil
}

// appendFields appends the first n fields of line (n < 0: all), split
// at runs of spaces and tabs (all a procfs line holds), to f.
func appendFields(f [][]byte, line []byte, n int) [][]byte {
	for ; n != 0; n-- {
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\n') {
			i++
		}
		line = line[i:]
		if len(line) == 0 {
			return f
		}
		j := 0
		for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '\n' {
			j++
		}
		f = append(f, line[:j])
		line = line[j:]
	}
	return f
}
