package runconfig_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/workload/all"
)

func init() { all.Register() }

func parse(t *testing.T, args ...string) *runconfig.Config {
	t.Helper()
	c, err := runconfig.Parse(args, os.ReadFile)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return c
}

func encode(t *testing.T, c *runconfig.Config) []byte {
	t.Helper()
	b, err := c.EncodeJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A flag line and the file with the same keys give byte-identical
// configurations; flags given with --config override the file's keys.
func TestFlagLineEqualsFile(t *testing.T) {
	line := parse(t, "tpcb", "-c", "4,8", "-T", "30", "-M", "prepared", "--dsn", "host=db dbname=bench",
		"--autostop", "errors>25/s for 10s", "--autostop", "p95>500ms for 10s", "-L", "50", "-R", "100",
		"--seed", "42", "--scale", "3", "--session-set", "work_mem=64MB", "--random-seed=42", "--failover", "1m")
	file := filepath.Join(t.TempDir(), "run.yaml")
	doc := `workload: tpcb
clients: 4,8
time: 30s
protocol: prepared
dsn: host=db dbname=bench
autostop: ["errors>25/s for 10s", "p95>500ms for 10s"]
latency-limit: 50ms
rate: 100
seed: 42
scale: 3
session-set: work_mem=64MB
failover: 1m
label: from-file
`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile := parse(t, "--config", file, "--label", "")
	if a, b := encode(t, line), encode(t, fromFile); !bytes.Equal(a, b) {
		t.Fatalf("flag line and file differ:\n%s\n---\n%s", a, b)
	}
	over := parse(t, "--config", file, "-c", "16", "--scale", "5")
	if over.Clients != "16" || over.Params["scale"] != "5" || over.Label != "from-file" || runconfig.Val(over.Time) != 30*time.Second {
		t.Fatalf("command line over file: clients %q scale %q label %q time %s", over.Clients, over.Params["scale"], over.Label, runconfig.Val(over.Time))
	}
	if err := line.Validate(); err != nil {
		t.Fatal(err)
	}
}

// A configuration survives JSON and YAML unchanged, and its YAML is a
// --config file giving the same configuration.
func TestRoundTrip(t *testing.T) {
	c := parse(t, "sysbench", "oltp_read_only", "--tables", "2", "-c", "2", "-t", "100", "--out", "jsonl=-",
		"--pg-set", "shared_buffers=1GB", "--replica", "streaming", "--via", "pgbouncer:session", "--segment", "1/2",
		"--start-at", "2030-01-01T00:00:00Z", "--segment-of", "x")
	var back runconfig.Config
	if err := json.Unmarshal(encode(t, c), &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, c), encode(t, &back)) {
		t.Fatalf("JSON round trip changed the config")
	}
	y, err := c.EncodeYAML()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, y, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := parse(t, "--config", file); !bytes.Equal(encode(t, c), encode(t, got)) {
		t.Fatalf("YAML round trip:\n%s\n---\n%s", encode(t, c), encode(t, got))
	}
	if len(c.Args) != 1 || c.Params["tables"] != "2" {
		t.Fatalf("args %q params %v", c.Args, c.Params)
	}
}

// Validate names every bad key at once, one line each.
func TestValidateListsEveryError(t *testing.T) {
	c := runconfig.Default()
	c.Workload, c.Params = "tpcb", map[string]string{"scale": "-1"}
	sec := time.Second
	c.Time, c.Transactions, c.MaxTries, c.Interval, c.Arrival = &sec, 10, 0, 0, "bursty"
	c.NetIO, c.Out = "carrier-pigeon", []string{"nosuch=x"}
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	for _, want := range []string{"tpcb", "--time", "--max-tries", "--interval", "--arrival", "--net-io", "--out nosuch"} {
		found := false
		for _, l := range lines {
			found = found || strings.Contains(l, want)
		}
		if !found {
			t.Errorf("no line names %s in:\n%s", want, err)
		}
	}
}

// Redacted masks passwords in every value holding a connection string.
func TestRedacted(t *testing.T) {
	c := parse(t, "tpcb", "--dsn", "postgres://u:secret@db/x", "--replica-dsn", "host=r password=secret",
		"--worker-dsn", "postgres://u:secret@w1/x")
	b := encode(t, c.Redacted())
	if bytes.Contains(b, []byte("secret")) {
		t.Fatalf("password recorded: %s", b)
	}
	if !strings.Contains(c.DSN, "secret") {
		t.Fatal("Redacted changed the original")
	}
}

// A file key that is neither a run flag nor a parameter of the workload is
// bad input naming the key.
func TestFileUnknownKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.yaml")
	os.WriteFile(file, []byte("workload: tpcb\nclinets: 4\nmax-tries: x\n"), 0o600)
	_, err := runconfig.Parse([]string{"--config", file}, os.ReadFile)
	if err == nil || !strings.Contains(err.Error(), "clinets") || !strings.Contains(err.Error(), "max-tries") {
		t.Fatalf("err = %v", err)
	}
}
