package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestOutJSONLAndCSV streams one run to two jsonl outputs (a file and
// stdout) and a csv file: the two jsonl streams are the same bytes, start
// first and end last, an interval line per interval of the run directory,
// and the csv rows add up to the summary's committed count.
func TestOutJSONLAndCSV(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	results, dir := t.TempDir(), t.TempDir()
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	jl, cf := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
	r := mustRun(t, "run", "tpcb", "-S", "-c", "2", "-T", "2s", "--interval", "250ms", "--sample-interval", "1",
		"--dsn", dsn, "--results", results, "--out", "jsonl="+jl, "--out", "csv="+cf, "--out", "jsonl=-")
	if !strings.Contains(r.stderr, "tps = ") {
		t.Errorf("with --out jsonl=- the text summary should go to stderr:\n%s", r.stderr)
	}
	file, err := os.ReadFile(jl)
	if err != nil {
		t.Fatal(err)
	}
	if string(file) != r.stdout {
		t.Errorf("jsonl file and jsonl=- differ:\n%s\n---\n%s", file, r.stdout)
	}
	type line struct {
		Type string          `json:"type"`
		Run  string          `json:"run"`
		Data json.RawMessage `json:"data"`
	}
	var lines []line
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not a JSON line: %v: %s", err, sc.Text())
		}
		lines = append(lines, l)
	}
	if len(lines) < 3 || lines[0].Type != "start" || lines[len(lines)-1].Type != "end" {
		t.Fatalf("want start first and end last, got %d lines", len(lines))
	}
	id := lines[0].Run
	count := map[string]int{}
	for _, l := range lines {
		count[l.Type]++
		if l.Run != id {
			t.Errorf("line of run %q in run %q", l.Run, id)
		}
	}
	stored, err := os.ReadFile(filepath.Join(results, id, "intervals.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(stored), "\n"); count["interval"] != n || n < 4 {
		t.Errorf("%d interval lines, the run directory has %d (want at least 4)", count["interval"], n)
	}
	if count["sample"] == 0 {
		t.Errorf("no sample lines: %v", count)
	}
	var end struct {
		Summary struct {
			Transactions int64 `json:"transactions"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(lines[len(lines)-1].Data, &end); err != nil || end.Summary.Transactions <= 0 {
		t.Fatalf("end line: %v, %s", err, lines[len(lines)-1].Data)
	}

	fh, err := os.Open(cf)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != count["interval"]+1 { // select-only: one type
		t.Fatalf("%d csv rows, want a header and %d", len(rows), count["interval"])
	}
	var committed int64
	for _, row := range rows[1:] {
		if row[0] != id || row[8] != "select-only" {
			t.Errorf("row %v: want run %s, type select-only", row, id)
		}
		n, _ := strconv.ParseInt(row[9], 10, 64)
		committed += n
	}
	if committed != end.Summary.Transactions {
		t.Errorf("csv rows commit %d, the summary %d", committed, end.Summary.Transactions)
	}
}

// TestOutBadInput: a wrong --out is one line and exit 2, before anything
// is recorded.
func TestOutBadInput(t *testing.T) {
	t.Parallel()
	results := t.TempDir()
	dsn := "postgres://pgarena@127.0.0.1:1/none" // never reached
	base := []string{"run", "tpcb", "-T", "1s", "--dsn", dsn, "--results", results}
	for _, c := range []struct {
		out  []string
		want string
	}{
		{[]string{"--out", "influx=http://x"}, `unknown output "influx" (known: csv=FILE, jsonl=FILE|-)`},
		{[]string{"--out", "jsonl"}, "output jsonl needs an argument: --out jsonl=FILE|-"},
		{[]string{"--out", "csv="}, "output csv needs an argument"},
		{[]string{"--out", "jsonl=-", "--json"}, "stdout is already taken"},
		{[]string{"--out", "jsonl=-", "--out", "jsonl=-"}, "stdout is already taken"},
		{[]string{"--out", "csv=" + filepath.Join(results, "no", "such", "dir.csv")}, "no such file or directory"},
	} {
		wantUsage(t, pgarena(t, nil, append(base, c.out...)...), c.want)
	}
	noRuns(t, results)
}

// TestOutFailingReportedAtEnd: an output that cannot write (a full disk:
// /dev/full) does not stop or slow the run; it is listed after the summary
// and the run is complete.
func TestOutFailingReportedAtEnd(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dsn := pgtest.DSN(t)
	mustRun(t, "init", "tpcb", "-s", "1", "--dsn", dsn)
	r := mustRun(t, "run", "tpcb", "-S", "-c", "1", "-T", "1s", "--dsn", dsn, "--results", t.TempDir(),
		"--out", "jsonl=/dev/full")
	i := strings.Index(r.stderr, "outputs:\n  output jsonl=/dev/full failed: ")
	if i < 0 || !strings.Contains(r.stderr[i:], "no space left on device") {
		t.Errorf("the failing output should be listed at the end:\n%s", r)
	}
}
