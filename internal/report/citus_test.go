package report

import (
	"slices"
	"strings"
	"testing"
	"time"

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

// TestCitusWorkerCharts: each sampled Citus worker gets its own chart of
// top wait events, labelled as the coordinator's (wait.<type>:<event>,
// wait.other left out), and one chart draws every worker's CPU.
func TestCitusWorkerCharts(t *testing.T) {
	r := outageRun()
	for s := range 12 {
		r.Samples = append(r.Samples, store.Sample{Time: t0.Add(time.Duration(s)*time.Second + 500*time.Millisecond), Source: "citus_workers",
			Values: map[string]float64{"citus.127_0_0_1_9701.wait.Lock:transactionid": 3, "citus.127_0_0_1_9701.wait.CPU": 1,
				"citus.127_0_0_1_9701.wait.other": 1, "citus.127_0_0_1_9701.cpu_cores": 0.5}},
			store.Sample{Time: t0.Add(time.Duration(s)*time.Second + 500*time.Millisecond), Source: "citus_workers",
				Values: map[string]float64{"citus.127_0_0_1_9702.wait.IO:DataFileRead": 2, "citus.127_0_0_1_9702.cpu_cores": 0.25}})
	}
	cs := buildCharts([]*store.Run{r}, []string{"citus"})
	names := func(id string) []string {
		var out []string
		for _, s := range chartByID(t, cs, id).Series {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names("citus-worker-waits-127_0_0_1_9701"); !slices.Equal(got, []string{"wait.Lock:transactionid", "wait.CPU"}) {
		t.Errorf("worker 9701's waits chart draws %q", got)
	}
	if got := names("citus-worker-waits-127_0_0_1_9702"); !slices.Equal(got, []string{"wait.IO:DataFileRead"}) {
		t.Errorf("worker 9702's waits chart draws %q", got)
	}
	if got := names("citus-worker-cpu"); !slices.Equal(got, []string{"citus.127_0_0_1_9701.cpu_cores", "citus.127_0_0_1_9702.cpu_cores"}) {
		t.Errorf("workers' CPU chart draws %q", got)
	}
	if c := chartByID(t, cs, "citus-worker-waits-127_0_0_1_9701"); c.Title != "Citus worker 127_0_0_1_9701: top wait events (active sessions, Citus's internal ones included)" {
		t.Errorf("title %q", c.Title)
	}
}
