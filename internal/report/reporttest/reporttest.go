// Package reporttest writes fixed runs into a results directory with the
// store's own writer, for golden tests of reports, comparisons and exports.
// Every value (times, latencies, counts, host) is fixed, so the files and
// everything rendered from them are the same on every machine.
package reporttest

import (
	"fmt"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/store"
)

// T0 is the creation time of the first fixed run.
var T0 = time.Date(2026, 11, 22, 3, 15, 12, 0, time.UTC)

// Fixture describes one fixed run.
type Fixture struct {
	Label    string
	Workload string
	Scale    string
	Clients  int
	// Speed scales throughput: the run commits 100*Speed "a" and 10*Speed
	// "b" transactions per second; latencies shrink as it grows.
	Speed float64
	// Intervals is the number of one-second intervals; the first Warmup of
	// them are warm-up.
	Intervals, Warmup int
	// Deadlocks per interval (type b), and one connection_lost in interval 5
	// when Outage is set (with Connected dropping to 0 for it).
	Deadlocks int
	Outage    bool
	// Interrupted leaves the run without a summary, as if pgarena died.
	Interrupted bool
	// ServerVersion and Host override the defaults ("PostgreSQL 16.4",
	// "bench1").
	ServerVersion, Host string
	Settings            map[string]string
	// Steps makes a sweep: one step per entry (its client count), each of
	// Intervals intervals (the first Warmup of them warm-up), throughput
	// growing with the clients and latency with it.
	Steps []int
}

// Sweep is a closed-loop sweep over 2, 4 and 8 clients.
func Sweep() Fixture {
	return Fixture{Label: "sweep", Workload: "tpcb", Scale: "10", Clients: 8, Speed: 1, Intervals: 6, Warmup: 1, Steps: []int{2, 4, 8}}
}

// Standard is the set of runs the golden tests use, oldest first: three
// repeats labelled pool-a, three labelled pool-b (about 5% faster), a run at
// another scale, an interrupted run with an outage, and a run whose label is
// an XSS probe.
func Standard() []Fixture {
	f := func(label string, speed float64) Fixture {
		return Fixture{Label: label, Workload: "tpcb", Scale: "10", Clients: 8, Speed: speed, Intervals: 12, Warmup: 2, Deadlocks: 1}
	}
	runs := []Fixture{
		f("pool-a", 1.00), f("pool-a", 1.02), f("pool-a", 0.98),
		f("pool-b", 1.05), f("pool-b", 1.07), f("pool-b", 1.04),
	}
	other := f("scale-100", 0.9)
	other.Scale = "100"
	other.ServerVersion = "PostgreSQL 17.0"
	other.Host = "bench2"
	other.Settings = map[string]string{"shared_buffers": "8GB", "max_connections": "100"}
	runs = append(runs, other)
	intr := f("outage", 1.0)
	intr.Outage, intr.Interrupted = true, true
	runs = append(runs, intr)
	runs = append(runs, f("<script>alert(1)</script>", 1.01))
	return runs
}

// Write creates the fixtures in the results directory dir, one minute
// apart starting at T0, and returns their run ids in order.
func Write(dir string, fixtures []Fixture) ([]string, error) {
	st, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(fixtures))
	for i, fx := range fixtures {
		created := T0.Add(time.Duration(i) * time.Minute)
		if ids[i], err = write(st, created, i, fx); err != nil {
			return nil, fmt.Errorf("fixture %d: %w", i, err)
		}
	}
	return ids, nil
}

func write(st *store.Store, created time.Time, n int, fx Fixture) (string, error) {
	host := fx.Host
	if host == "" {
		host = "bench1"
	}
	version := fx.ServerVersion
	if version == "" {
		version = "PostgreSQL 16.4"
	}
	settings := fx.Settings
	if settings == nil {
		settings = map[string]string{"shared_buffers": "1GB", "max_connections": "100"}
	}
	spec := store.RunSpec{
		ID:             created.UTC().Format("20060102-150405") + "-" + fx.Workload, // fixed: golden files show it
		Created:        created,
		PgarenaVersion: "0.1.0-test",
		CommandLine:    []string{"pgarena", "run", fx.Workload, "-s", fx.Scale, "-c", fmt.Sprint(fx.Clients), "--label", fx.Label},
		Workload:       fx.Workload,
		Params:         map[string]string{"scale": fx.Scale, "script": "tpcb-like"},
		Seed:           int64(1000 + n),
		Label:          fx.Label,
		Clients:        fx.Clients,
		Threads:        2,
		DurationS:      float64(fx.Intervals),
		QueryMode:      "prepared",
		MaxTries:       1,
		TickS:          1,
		Target:         "postgres://bench@db1/bench",
		Host:           store.HostInfo{Hostname: host, Cores: 8, MemoryBytes: 32 << 30, Kernel: "Linux 6.1.0", OS: "Debian GNU/Linux 12 (bookworm)", Arch: "amd64", GoVersion: "go1.26.0"},
	}
	if len(fx.Steps) > 0 {
		var parts []string
		for _, c := range fx.Steps {
			parts = append(parts, fmt.Sprintf("%d clients", c))
		}
		spec.Load = map[string]string{"model": "closed", "sweep": strings.Join(parts, ", ")}
	}
	w, err := st.Create(spec)
	if err != nil {
		return "", err
	}
	defer w.Close()
	if err := w.SetServer(store.ServerInfo{Version: version, VersionNum: 160004, Settings: settings}); err != nil {
		return "", err
	}
	start := created.Add(2 * time.Second)
	steps := fx.Steps
	if len(steps) == 0 {
		steps = []int{fx.Clients}
	}
	var acc metrics.Accumulator
	var stepSums []metrics.StepSummary
	seq := 0
	for k, clients := range steps {
		speed := fx.Speed * float64(clients) / float64(steps[0])
		stepNo := 0
		if len(fx.Steps) > 0 {
			stepNo = k + 1
		}
		stepStart := start.Add(time.Duration(k*(fx.Intervals+1)) * time.Second)
		var stepAcc metrics.Accumulator
		// Latency grows with the clients of a sweep (a closed loop queues).
		slow := float64(clients) / float64(steps[0])
		if err := writeIntervals(w, fx, stepStart, speed, slow, clients, stepNo, &seq, &acc, &stepAcc); err != nil {
			return "", err
		}
		if stepNo > 0 {
			stepSums = append(stepSums, stepAcc.Step(stepNo, clients, 0))
		}
	}
	end := acc.Last
	if !fx.Interrupted {
		sum := metrics.Summary{Status: metrics.StatusComplete, Workload: fx.Workload, Label: fx.Label,
			QueryMode: spec.QueryMode, Clients: fx.Clients, Threads: spec.Threads, Params: spec.Params,
			Start: start, End: end, InitialConnectMS: 3.5, Steps: stepSums}
		acc.Fill(&sum)
		if err := w.Finish(sum, &acc); err != nil {
			return "", err
		}
	}
	return w.ID(), w.Close()
}

// writeIntervals writes the intervals of one step (the whole run when not a
// sweep) starting at start.
func writeIntervals(w *store.Writer, fx Fixture, start time.Time, speed, slow float64, clients, stepNo int, seq *int,
	acc, stepAcc *metrics.Accumulator) error {
	rec := metrics.NewRecorder([]string{"a", "b"}, start)
	rec.SetWarmupEnd(start.Add(time.Duration(fx.Warmup) * time.Second))
	h := rec.NewHandle()
	na, nb := int(100*speed), int(10*speed)
	for s := 0; s < fx.Intervals; s++ {
		base := start.Add(time.Duration(s) * time.Second)
		outage := fx.Outage && s == 5
		if !outage {
			// type a: (1+i%10)/Speed ms, rising a little over the run;
			// type b: 20/Speed ms, queued 5 ms.
			for i := 0; i < na+s%3; i++ {
				d := time.Duration(slow * float64(time.Duration(1+i%10)*time.Millisecond+time.Duration(s)*50*time.Microsecond) / fx.Speed)
				h.Record(0, base, base, base.Add(d), pgerr.ClassNone)
			}
			for i := 0; i < nb; i++ {
				d := time.Duration(slow * float64(20*time.Millisecond) / fx.Speed)
				h.Record(1, base, base.Add(5*time.Millisecond), base.Add(d), pgerr.ClassNone)
			}
			for i := 0; i < fx.Deadlocks; i++ {
				at := base.Add(time.Duration(100+i) * time.Millisecond)
				h.Fail(1, pgerr.ClassDeadlock, pgerr.ErrorDetail{Time: at, Severity: "ERROR", SQLState: "40P01",
					Message: "deadlock detected", Detail: fmt.Sprintf("Process %d waits for ShareLock on transaction %d; blocked by process %d.", 4000+i, 900+s, 4100+i),
					Hint: "See server log for query details."})
			}
		} else {
			h.Fail(0, pgerr.ClassConnectionLost, pgerr.ErrorDetail{Time: base.Add(10 * time.Millisecond),
				Message: "failed to receive message: unexpected EOF"})
		}
		iv := rec.Tick(base.Add(time.Second))
		*seq++
		iv.Seq, iv.Step = *seq, stepNo
		iv.Connected = clients
		if outage {
			iv.Connected = 0
		}
		if err := w.AppendIntervals(iv); err != nil {
			return err
		}
		acc.Add(iv)
		stepAcc.Add(iv)
	}
	return nil
}
