package runconfig_test

import (
	"strings"
	"testing"
	"time"
)

// Build resolves a configuration against its workload into what the
// session runs: protocol, length, groups, settings, logs.
func TestBuild(t *testing.T) {
	r, err := parse(t, "ycsb", "--operation-count", "300", "-c", "3", "--session-set", "work_mem=8MB", "-l").Build()
	if err != nil {
		t.Fatal(err)
	}
	s := r.Spec
	if r.Protocol != "prepared" || r.Transactions != 100 || r.Duration != 0 || s.Transactions != 100 || r.Clients != 3 {
		t.Errorf("protocol %s, transactions %d, duration %s, clients %d", r.Protocol, r.Transactions, r.Duration, r.Clients)
	}
	if len(s.Groups) != 1 || s.Groups[0].Settings["work_mem"] != "8MB" || s.TxLog == nil || s.Groups[0].QueryMode != "prepared" {
		t.Errorf("spec %+v", s)
	}
	r, err = parse(t, "chbench", "--oltp-clients", "3", "--olap-clients", "2").Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Spec.Groups) != 2 || r.Clients != 5 || r.Spec.Figures == nil || r.Duration != 60*time.Second {
		t.Errorf("chbench: %d groups, %d clients", len(r.Spec.Groups), r.Clients)
	}
	for _, bad := range [][]string{
		{"chbench", "-c", "4"},
		{"ycsb", "--operation-count", "301", "-c", "3"},
		{"tpcb", "--read-dsn", "host=r", "-c", "1,2"},
		{"tpcb", "--session-set", "nosuch:work_mem=1MB"},
	} {
		if _, err := parse(t, bad...).Build(); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: err = %v, want one line", bad, err)
		}
	}
}
