package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/pgarena/pgarena/internal/metrics"
)

// smallDisk mounts a tmpfs of size bytes on a fresh directory and returns
// it; it is unmounted when the test ends. Mounting needs root (or
// CAP_SYS_ADMIN): without it the test is skipped, which is no fault of
// pgarena.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a %s tmpfs on %s to fill (needs root): %v", size, dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file in dir until the filesystem is full, then gives back
// leave bytes (rounded to pages by tmpfs).
func fill(t *testing.T, dir string, leave int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	var size int64
	for {
		n, err := f.Write(chunk)
		size += int64(n)
		if err != nil {
			if !isNoSpace(err) {
				t.Fatal(err)
			}
			break
		}
	}
	if err := f.Truncate(max(size-leave, 0)); err != nil {
		t.Fatal(err)
	}
}

// runDirs lists the entries of the results directory other than the filler.
func runDirs(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		if e.Name() != "filler" {
			names = append(names, e.Name())
		}
	}
	return names
}

// checkDiskFullError wants err to wrap ErrDiskFull (not ErrNotWritable: a
// full disk is not bad input) in one line naming dir and the cause.
func checkDiskFullError(t *testing.T, what string, err error, dir string) {
	t.Helper()
	if !errors.Is(err, ErrDiskFull) || errors.Is(err, ErrNotWritable) {
		t.Fatalf("%s = %v, want ErrDiskFull", what, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, `results directory "`+dir+`" is full`) ||
		!strings.Contains(msg, "no space left on device") {
		t.Errorf("%s: %q, want one line naming %s and the cause", what, msg, dir)
	}
}

// TestDiskFullAtStart: a results directory on a full filesystem gives one
// line naming it and the cause (no panic), and leaves no run behind.
func TestDiskFullAtStart(t *testing.T) {
	dir := smallDisk(t, "256k")
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, dir, 0)
	_, err = Open(dir)
	checkDiskFullError(t, "Open on a full disk", err, dir)

	w, err := st.Create(testSpec("tpcb", t0))
	if err == nil {
		w.Close()
		t.Fatal("Create on a full disk succeeded")
	}
	checkDiskFullError(t, "Create on a full disk", err, dir)
	t.Log(err)
	if names := runDirs(t, dir); len(names) != 0 {
		t.Errorf("left behind on the full disk: %v", names)
	}
	if runs, err := st.List(); err != nil || len(runs) != 0 {
		t.Errorf("List = %v, %v; want no run", runs, err)
	}
}

// TestDiskFullDuringRun: the disk fills while intervals are appended. The
// append that does not fit fails with ErrDiskFull and leaves no torn line;
// Finish and SetFindings fail cleanly (no temporary files); the run loads
// as interrupted with every interval appended before.
func TestDiskFullDuringRun(t *testing.T) {
	dir := smallDisk(t, "512k")
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(testSpec("tpcb", t0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fill(t, dir, 16<<10)

	ivs := makeIntervals()
	var written int
	for i := 0; ; i++ {
		if i == 10000 {
			t.Fatal("10000 intervals fit in 16 kB")
		}
		iv := ivs[i%len(ivs)]
		iv.Seq = i + 1
		err := w.AppendIntervals(iv)
		if err != nil {
			checkDiskFullError(t, "AppendIntervals", err, dir)
			if !strings.Contains(err.Error(), "interval "+strconv.Itoa(i+1)) {
				t.Errorf("AppendIntervals: %q does not name interval %d", err, i+1)
			}
			break
		}
		written++
	}
	if written == 0 {
		t.Fatal("no interval fit")
	}
	err = w.AppendSamples(Sample{Time: t0, Source: "host_cpu", Values: map[string]float64{"host.cpu.busy_pct": 50}})
	if err != nil && !errors.Is(err, ErrDiskFull) {
		t.Errorf("AppendSamples = %v, want nil or ErrDiskFull", err)
	}
	fs := make([]Finding, 200)
	for i := range fs {
		fs[i] = Finding{Severity: SeverityInfo, Kind: "filler", Message: strings.Repeat("x", 200)}
	}
	checkDiskFullError(t, "SetFindings", w.SetFindings(fs), dir)
	acc := accumulate(ivs)
	checkDiskFullError(t, "Finish", w.Finish(metrics.Summary{Status: metrics.StatusComplete}, acc), dir)
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	es, err := os.ReadDir(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") || e.Name() == SummaryFile {
			t.Errorf("left in the run directory: %s", e.Name())
		}
	}

	r, err := st.Load(w.ID())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if r.Status != metrics.StatusInterrupted || r.Truncated || len(r.Intervals) != written {
		t.Errorf("loaded status %s, truncated %v, %d intervals; want interrupted, whole, %d", r.Status, r.Truncated, len(r.Intervals), written)
	}
}
