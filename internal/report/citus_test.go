package report

import (
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/store"
)

// TestComparabilityClusterShapes: runs on plain PostgreSQL and on Citus
// (or on Citus clusters of different shapes) are compared with a warning
// naming both shapes.
func TestComparabilityClusterShapes(t *testing.T) {
	citus := &store.CitusInfo{Version: "Citus 13.2.2",
		Workers: []store.CitusNode{{Host: "w1", Port: 5432, Active: true}, {Host: "w2", Port: 5432, Active: true}},
		Tables:  []store.CitusTable{{Name: "lineitem", Type: "distributed", Shards: 32}, {Name: "part", Type: "reference", Shards: 1}}}
	run := func(s *store.ServerInfo) *store.Run {
		return &store.Run{Spec: store.RunSpec{Workload: "tpch"}, Server: s}
	}
	_, warnings := Comparability([]*store.Run{run(&store.ServerInfo{Version: "PostgreSQL 15.20"}), run(&store.ServerInfo{Version: "PostgreSQL 15.20", Citus: citus})})
	got := strings.Join(warnings, "\n")
	if !strings.Contains(got, `cluster shapes differ`) || !strings.Contains(got, `"plain PostgreSQL"`) || !strings.Contains(got, `"Citus with 2 workers (distributed: lineitem/32)"`) {
		t.Errorf("warnings %q, want the two cluster shapes", warnings)
	}
	_, warnings = Comparability([]*store.Run{run(&store.ServerInfo{Citus: citus}), run(&store.ServerInfo{Citus: citus})})
	if strings.Contains(strings.Join(warnings, "\n"), "cluster shapes") {
		t.Errorf("same shapes warned: %q", warnings)
	}
}
