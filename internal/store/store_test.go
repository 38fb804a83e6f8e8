package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
)

var t0 = time.Date(2026, 11, 22, 3, 15, 12, 250e6, time.UTC)

// makeIntervals returns three one-second intervals from t0 for two
// transaction types; the first is warm-up.
func makeIntervals() []metrics.Interval {
	rec := metrics.NewRecorder([]string{"select", "update"}, t0)
	rec.SetWarmupEnd(t0.Add(time.Second))
	h1, h2 := rec.NewHandle(), rec.NewHandle()
	var ivs []metrics.Interval
	for k := 1; k <= 3; k++ {
		base := t0.Add(time.Duration(k-1) * time.Second)
		for j := 0; j < 50; j++ {
			start := base.Add(time.Duration(j) * 10 * time.Millisecond)
			h1.Record(0, start, start, start.Add(time.Duration((j+1)*k)*100*time.Microsecond), pgerr.ClassNone)
			h2.Record(1, start.Add(-time.Millisecond), start, start.Add(2*time.Millisecond+time.Duration(j*37*k)*time.Microsecond), pgerr.ClassNone)
		}
		h2.Record(1, base, base, base.Add(time.Millisecond), pgerr.ClassDeadlock)
		h2.Retry(1, pgerr.ClassSerialization, true)
		iv := rec.Tick(base.Add(time.Second))
		iv.Connected = 2
		ivs = append(ivs, iv)
	}
	return ivs
}

func testSpec(workload string, created time.Time) RunSpec {
	return RunSpec{
		Created: created, PgarenaVersion: "test", CommandLine: []string{"pgarena", "run", workload},
		Workload: workload, Params: map[string]string{"scale": "1"}, Seed: 42, Label: "lbl",
		Clients: 2, Threads: 1, DurationS: 3, QueryMode: "simple", MaxTries: 1, TickS: 1,
		Target: "postgres://bench:xxxxx@localhost/bench", Host: CollectHostInfo(),
	}
}

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "results"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func jsonEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func accumulate(ivs []metrics.Interval) *metrics.Accumulator {
	acc := &metrics.Accumulator{}
	for _, iv := range ivs {
		acc.Add(iv)
	}
	return acc
}

func checkIntervals(t *testing.T, got, want []metrics.Interval) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d intervals, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Seq != w.Seq || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || g.Warmup != w.Warmup ||
			g.Connected != w.Connected || len(g.Tx) != len(w.Tx) {
			t.Fatalf("interval %d: got %+v, want %+v", i, g, w)
		}
		for j := range w.Tx {
			gt, wt := g.Tx[j], w.Tx[j]
			if gt.Name != wt.Name || gt.Count != wt.Count || gt.Errors != wt.Errors || gt.Retries != wt.Retries {
				t.Errorf("interval %d tx %d: got %+v, want %+v", i, j, gt, wt)
			}
			if !gt.Latency.Equals(wt.Latency) || !gt.Service.Equals(wt.Service) {
				t.Errorf("interval %d tx %s: histograms differ", i, wt.Name)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	s := openStore(t)
	older, err := s.Create(testSpec("tpcb", t0.Add(-time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if err := older.Close(); err != nil {
		t.Fatal(err)
	}

	spec := testSpec("tpcb", t0)
	w, err := s.Create(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^20261122-031512-tpcb-[a-z0-9]{4}$`).MatchString(w.ID()) || w.Dir() != filepath.Join(s.Dir(), w.ID()) {
		t.Fatalf("id %q dir %q", w.ID(), w.Dir())
	}
	srv := ServerInfo{Version: "PostgreSQL 17.2", VersionNum: 170002, Settings: map[string]string{"shared_buffers": "128MB"}}
	if err := w.SetServer(srv); err != nil {
		t.Fatal(err)
	}
	ivs := makeIntervals()
	for _, iv := range ivs {
		if err := w.AppendIntervals(iv); err != nil {
			t.Fatal(err)
		}
	}
	acc := accumulate(ivs)
	sum := metrics.Summary{Status: metrics.StatusComplete, Workload: "tpcb", Label: "lbl", QueryMode: "simple",
		Clients: 2, Threads: 1, Params: spec.Params, Start: ivs[0].Start, End: ivs[2].End}
	acc.Fill(&sum)
	if err := w.Finish(sum, acc); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.AppendIntervals(ivs[0]); err == nil {
		t.Fatal("AppendIntervals after Close succeeded")
	}
	sum.RunID = w.ID()

	r, err := s.Load(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != metrics.StatusComplete || r.Truncated || r.ID != w.ID() || r.Dir != w.Dir() {
		t.Fatalf("status %q truncated %v id %q dir %q", r.Status, r.Truncated, r.ID, r.Dir)
	}
	if r.Spec.ID != w.ID() || !r.Spec.Created.Equal(t0) || r.Spec.Seed != 42 || r.Spec.Host.GoVersion == "" {
		t.Errorf("spec %+v", r.Spec)
	}
	if r.Server == nil || r.Server.VersionNum != 170002 || r.Server.Settings["shared_buffers"] != "128MB" {
		t.Errorf("server %+v", r.Server)
	}
	checkIntervals(t, r.Intervals, ivs)
	jsonEqual(t, "summary", r.Summary, sum)
	if r.Summary.Transactions != 200 || r.Summary.Failed != 2 || r.Summary.Retries != 2 || r.Summary.Latency.P95 == 0 {
		t.Errorf("summary counts: %+v", r.Summary)
	}
	// The summary computed from the intervals agrees with the written one.
	jsonEqual(t, "computed summary", r.computeSummary(metrics.StatusComplete), sum)

	hs, err := r.Histograms()
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 {
		t.Fatalf("hlog holds %d histograms, want 2", len(hs))
	}
	for name, want := range acc.Histograms() {
		got := hs[name]
		if got == nil || !got.Equals(want) {
			t.Errorf("hlog histogram %q differs", name)
			continue
		}
		if got.StartTimeMs() != acc.First.UnixMilli() || got.EndTimeMs() != acc.Last.UnixMilli() {
			t.Errorf("hlog %q covers %d..%d, want %d..%d", name, got.StartTimeMs(), got.EndTimeMs(),
				acc.First.UnixMilli(), acc.Last.UnixMilli())
		}
	}

	runs, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != w.ID() || runs[1].ID != older.ID() {
		t.Fatalf("List: %+v", runs)
	}
	if ri := runs[0]; ri.Status != metrics.StatusComplete || ri.TPS != sum.TPS || ri.P95MS != sum.Latency.P95 ||
		ri.Clients != 2 || ri.Label != "lbl" || ri.Workload != "tpcb" || !ri.Created.Equal(t0) {
		t.Errorf("List[0]: %+v", ri)
	}
	if runs[1].Status != metrics.StatusInterrupted {
		t.Errorf("closed without Finish: status %q", runs[1].Status)
	}

	// Permissions and formats.
	for _, name := range []string{SpecFile, ServerFile, IntervalsFile, SummaryFile, HistogramsFile} {
		fi, err := os.Stat(w.Path(name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != filePerm {
			t.Errorf("%s: mode %v", name, fi.Mode())
		}
	}
	if fi, _ := os.Stat(w.Dir()); fi.Mode().Perm() != dirPerm {
		t.Errorf("run dir mode %v", fi.Mode())
	}
	b, _ := os.ReadFile(w.Path(SpecFile))
	if !bytes.Contains(b, []byte("\n  \"workload\": \"tpcb\"")) {
		t.Errorf("spec.json not indented snake_case:\n%s", b)
	}
	b, _ = os.ReadFile(w.Path(IntervalsFile))
	if n := bytes.Count(b, []byte("\n")); n != 3 {
		t.Errorf("intervals.jsonl has %d lines", n)
	}
	entries, _ := os.ReadDir(w.Dir())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("leftover temporary file %s", e.Name())
		}
	}
}

// TestHelperProcess is the child of TestCrash: it starts a run, appends
// three intervals, reports the id and waits to be killed.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("PGARENA_STORE_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process for TestCrash")
	}
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	w, err := s.Create(testSpec("tpcb", t0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, iv := range makeIntervals() {
		if err := w.AppendIntervals(iv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	fmt.Printf("RUN_ID=%s\n", w.ID())
	// Block until killed; give up if the parent vanished. The writer
	// stays reachable meanwhile: a collected one would close its lock
	// file (os.File's finalizer) and the run would read as interrupted.
	<-time.After(2 * time.Minute)
	runtime.KeepAlive(w)
	os.Exit(3)
}

func TestCrash(t *testing.T) {
	s := openStore(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "PGARENA_STORE_HELPER_DIR="+s.Dir())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	var id string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "RUN_ID="); ok {
			id = v
			break
		}
	}
	if id == "" {
		t.Fatalf("helper reported no run id (%v)", sc.Err())
	}
	ivs := makeIntervals()

	// Live: the child holds the lock.
	r, err := s.Load("last")
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != id || r.Status != metrics.StatusRunning || len(r.Intervals) != 3 || r.Summary.Status != metrics.StatusRunning {
		t.Fatalf("live run: id %q status %q (summary %q), %d intervals", r.ID, r.Status, r.Summary.Status, len(r.Intervals))
	}
	runs, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != metrics.StatusRunning {
		t.Fatalf("List of live run: %+v", runs)
	}

	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true

	want := metrics.Summary{RunID: id, Status: metrics.StatusInterrupted, Workload: "tpcb", Label: "lbl",
		QueryMode: "simple", Clients: 2, Threads: 1, Params: map[string]string{"scale": "1"},
		Start: ivs[0].Start, End: ivs[2].End}
	accumulate(ivs).Fill(&want)

	r, err = s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != metrics.StatusInterrupted || r.Truncated {
		t.Fatalf("killed run: status %q truncated %v", r.Status, r.Truncated)
	}
	checkIntervals(t, r.Intervals, ivs)
	jsonEqual(t, "computed summary", r.Summary, want)
	if r.Summary.Transactions != 200 {
		t.Errorf("computed summary counts %d transactions, want 200 (warm-up excluded)", r.Summary.Transactions)
	}
	if runs, _ := s.List(); len(runs) != 1 || runs[0].Status != metrics.StatusInterrupted {
		t.Errorf("List of killed run: %+v", runs)
	}

	// A torn final line, as if the process died mid-write.
	path := filepath.Join(r.Dir, IntervalsFile)
	line, err := json.Marshal(ivs[0])
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, line[:len(line)/2])
	r, err = s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || r.Status != metrics.StatusInterrupted {
		t.Fatalf("torn line: truncated %v status %q", r.Truncated, r.Status)
	}
	checkIntervals(t, r.Intervals, ivs)
	jsonEqual(t, "computed summary with torn line", r.Summary, want)

	// A torn line followed by more is corruption, not a crash.
	appendFile(t, path, append([]byte("\n"), append(line, '\n')...))
	_, err = s.Load(id)
	if err == nil || !strings.Contains(err.Error(), path+":4:") {
		t.Fatalf("torn middle line: err %v, want one naming %s:4", err, path)
	}
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLiveInProcess(t *testing.T) {
	s := openStore(t)
	w, err := s.Create(testSpec("tpcc", t0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := s.Load(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != metrics.StatusRunning || len(r.Intervals) != 0 || r.Server != nil {
		t.Fatalf("new run: status %q, %d intervals, server %v", r.Status, len(r.Intervals), r.Server)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err = s.Load(w.ID()); err != nil || r.Status != metrics.StatusInterrupted {
		t.Fatalf("closed run: %v %v", r, err)
	}
}

func TestRefs(t *testing.T) {
	s := openStore(t)
	var ids []string
	for i, wl := range []string{"tpcb", "tpcc", "tpcb"} {
		spec := testSpec(wl, t0.Add(time.Duration(i)*time.Second))
		spec.ID = spec.Created.UTC().Format(idTimeLayout) + "-" + wl // a fixture's id
		w, err := s.Create(spec)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID())
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"20261122-031512-tpcb", "20261122-031513-tpcc", "20261122-031514-tpcb"}; strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	// Not runs: a directory without spec.json and a plain file.
	if err := os.Mkdir(filepath.Join(s.Dir(), "junk"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	for ref, want := range map[string]string{
		"last":                 ids[2],
		"last~0":               ids[2],
		"last~1":               ids[1],
		"last~2":               ids[0],
		ids[0]:                 ids[0],
		"20261122-031513":      ids[1],
		"20261122-031512-t":    ids[0],
		"20261122-031514-tpcb": ids[2],
	} {
		got, err := s.Resolve(ref)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
		}
		r, err := s.Load(ref)
		if err != nil || r.ID != want {
			t.Errorf("Load(%q) = %v, %v", ref, r, err)
		}
	}
	for _, ref := range []string{"nope", "last~3", "last~x", "", "junk", "..", "../results", "notes.txt"} {
		_, err := s.Load(ref)
		want := fmt.Sprintf("no run %q in %s (see pgarena list)", ref, s.Dir())
		if err == nil || err.Error() != want || !errors.Is(err, ErrNoRun) {
			t.Errorf("Load(%q): %v, want %q", ref, err, want)
		}
	}
	if _, err := s.Resolve("2026"); !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), ids[0]) {
		t.Errorf("ambiguous prefix: %v", err)
	}

	// Collisions: same second, same workload.
	for _, want := range []string{ids[0] + "-2", ids[0] + "-3"} {
		spec := testSpec("tpcb", t0)
		spec.ID = ids[0]
		w, err := s.Create(spec)
		if err != nil {
			t.Fatal(err)
		}
		if w.ID() != want {
			t.Errorf("collision id %q, want %q", w.ID(), want)
		}
		w.Close()
	}
	// An exact id wins over its use as a prefix of "-2" and "-3".
	if got, err := s.Resolve(ids[0]); err != nil || got != ids[0] {
		t.Errorf("Resolve(%q) = %q, %v", ids[0], got, err)
	}
	runs, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range runs {
		order = append(order, r.ID)
	}
	want := []string{ids[2], ids[1], ids[0] + "-3", ids[0] + "-2", ids[0]}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("List order %v, want %v", order, want)
	}
}

// Four segments started in the same second on four machines, their runs
// copied into one directory: the ids differ (each segment's is in its id,
// with a random tag for machines that run the same segment) and still sort
// by time.
func TestRunIDsUniqueAcrossMachines(t *testing.T) {
	seen := map[string]bool{}
	for _, seg := range []string{"0/4", "1/4", "2/4", "3/4", "0/4", ""} {
		spec := testSpec("tpcc", t0)
		spec.Segment = seg
		w, err := openStore(t).Create(spec) // another machine's results directory
		if err != nil {
			t.Fatal(err)
		}
		id := w.ID()
		w.Close()
		if seen[id] || !strings.HasPrefix(id, "20261122-031512-tpcc-") {
			t.Fatalf("id %q (seen: %v)", id, seen)
		}
		if seg != "" && !strings.Contains(id, "-"+strings.Replace(seg, "/", "of", 1)+"-") {
			t.Errorf("segment %s's id %q does not name it", seg, id)
		}
		seen[id] = true
	}
	// A later second sorts after.
	w, err := openStore(t).Create(testSpec("tpcc", t0.Add(time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for id := range seen {
		if compareIDs(id, w.ID()) >= 0 {
			t.Errorf("%s sorts after %s", id, w.ID())
		}
	}
	spec := testSpec("tpcc", t0)
	spec.ID = "../x"
	if _, err := openStore(t).Create(spec); err == nil {
		t.Error("an id with a '/' was accepted")
	}
}

func TestCompareIDs(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"x-9", "x-10", -1}, {"x", "x-2", -1}, {"x-2", "x-2", 0}, {"a", "b", -1}, {"x-10", "x-9", 1},
	} {
		if got := compareIDs(c.a, c.b); got != c.want {
			t.Errorf("compareIDs(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestOpenNotWritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(file, "results"), file} {
		_, err := Open(dir)
		if !errors.Is(err, ErrNotWritable) {
			t.Fatalf("Open(%q): %v, want ErrNotWritable", dir, err)
		}
		want := fmt.Sprintf("results directory %q is not writable: not a directory (use --results DIR or PGARENA_RESULTS)", dir)
		if err.Error() != want {
			t.Errorf("Open(%q):\n got %s\nwant %s", dir, err, want)
		}
	}
}

func TestOpenCreates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir() != dir {
		t.Errorf("Dir() = %q", s.Dir())
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != dirPerm {
		t.Fatalf("stat %s: %v %v", dir, fi, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("probe left %v", entries)
	}
	if runs, err := s.List(); err != nil || len(runs) != 0 {
		t.Errorf("List of empty store: %v %v", runs, err)
	}
	if _, err := s.Load("last"); !errors.Is(err, ErrNoRun) {
		t.Errorf("Load(last) on empty store: %v", err)
	}
}

func TestDefaultDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := DefaultDir(env(nil)); got != "./pgarena-results" {
		t.Errorf("DefaultDir() = %q", got)
	}
	if got := DefaultDir(env(map[string]string{"PGARENA_RESULTS": "/r"})); got != "/r" {
		t.Errorf("DefaultDir(PGARENA_RESULTS=/r) = %q", got)
	}
}

func TestHostInfo(t *testing.T) {
	h := CollectHostInfo()
	if h.Cores < 1 || h.GoVersion == "" || h.OS == "" || h.Arch == "" {
		t.Errorf("%+v", h)
	}
	if _, err := os.Stat("/proc/meminfo"); err == nil && h.MemoryBytes <= 0 {
		t.Errorf("MemoryBytes %d", h.MemoryBytes)
	}
	if h.Kernel == "" {
		t.Errorf("no kernel: %+v", h)
	}
	if got := parseMemTotal([]byte("MemFree: 1 kB\nMemTotal:       16315444 kB\n")); got != 16315444*1024 {
		t.Errorf("parseMemTotal = %d", got)
	}
	if got := parseOSRelease([]byte("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\n")); got != "Debian GNU/Linux 13 (trixie)" {
		t.Errorf("parseOSRelease = %q", got)
	}
}

func TestHistogramLogTags(t *testing.T) {
	if got := hlogTag("New Order,x", 0); got != "New_Order_x" {
		t.Errorf("hlogTag = %q", got)
	}
	if got := hlogTag("", 3); got != "tx3" {
		t.Errorf("hlogTag = %q", got)
	}
	acc := accumulate(makeIntervals())
	acc.Tx[0].Name = "new order"
	b, err := encodeHistogramLog(acc)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := ReadHistogramLog(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if hs["new_order"] == nil || !hs["new_order"].Equals(acc.Tx[0].Latency) || acc.Tx[0].Latency.Tag() != "" {
		t.Errorf("tagged histogram: %v", hs)
	}
	if b, err = encodeHistogramLog(nil); err != nil {
		t.Fatal(err)
	}
	if hs, err = ReadHistogramLog(bytes.NewReader(b)); err != nil || len(hs) != 0 {
		t.Errorf("empty log: %v %v", hs, err)
	}
}

func BenchmarkList(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ivs := makeIntervals()
	acc := accumulate(ivs)
	var sum metrics.Summary
	acc.Fill(&sum)
	sum.Status = metrics.StatusComplete
	for i := range 2000 {
		w, err := s.Create(testSpec("tpcb", t0.Add(time.Duration(i)*time.Second)))
		if err != nil {
			b.Fatal(err)
		}
		if i%10 != 0 {
			if err := w.Finish(sum, acc); err != nil {
				b.Fatal(err)
			}
		}
		w.Close()
	}
	b.ResetTimer()
	for b.Loop() {
		runs, err := s.List()
		if err != nil || len(runs) != 2000 {
			b.Fatal(len(runs), err)
		}
	}
}

// TestIntervalsFileIsJSONMarshal: intervals.jsonl holds json.Marshal's
// line for each interval, byte for byte, names that encoding/json
// escapes included.
func TestIntervalsFileIsJSONMarshal(t *testing.T) {
	w, err := openStore(t).Create(testSpec("tpcb", t0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := metrics.NewRecorder([]string{"a<b>&c", "é\u2028\"x\""}, t0)
	h := rec.NewHandle()
	var want []byte
	for k := 1; k <= 3; k++ {
		base := t0.Add(time.Duration(k-1) * time.Second)
		for j := range 20 * k {
			h.Record(j%2, base, base, base.Add(time.Duration(j+1)*time.Millisecond), pgerr.ClassNone)
		}
		iv := rec.Tick(base.Add(time.Second))
		b, err := json.Marshal(iv)
		if err != nil {
			t.Fatal(err)
		}
		want = append(append(want, b...), '\n')
		if err := w.AppendIntervals(iv); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(w.Path(IntervalsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("intervals.jsonl\n%s\njson.Marshal\n%s", got, want)
	}
}
