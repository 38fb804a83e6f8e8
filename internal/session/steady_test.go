package session

import (
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/driver"
)

// TestSteadyWindows: the windows "not steady" judges start after the ramp
// and the warm-up, and in an open loop cover only constant target rates.
func TestSteadyWindows(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	end := start.Add(60 * time.Second)
	sec := func(n int) time.Time { return start.Add(time.Duration(n) * time.Second) }
	sched := func(s string) driver.Schedule {
		d, err := driver.ParseSchedule(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		name         string
		ramp, warmup time.Duration
		step         Step
		stepNo       int
		want         [][2]time.Time
		label        string
	}{
		{name: "closed", step: Step{Clients: 4}, want: [][2]time.Time{{start, end}}},
		{name: "ramp", ramp: 10 * time.Second, step: Step{Clients: 4}, want: [][2]time.Time{{sec(10), end}}},
		{name: "warmup over ramp", ramp: 5 * time.Second, warmup: 20 * time.Second, step: Step{Clients: 4}, stepNo: 2,
			want: [][2]time.Time{{sec(20), end}}, label: "step 2: "},
		{name: "rate", warmup: 10 * time.Second, step: Step{Clients: 4, Rate: 100, Schedule: driver.ConstSchedule(100, 60*time.Second)},
			want: [][2]time.Time{{sec(10), end}}},
		{name: "rising", step: Step{Clients: 4, Schedule: sched("line(10,100,60s)")}},
		{name: "line then const", warmup: 5 * time.Second, step: Step{Clients: 4, Schedule: sched("line(10,100,20s) const(100,40s)")},
			want: [][2]time.Time{{sec(20), end}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := &Spec{Ramp: c.ramp, Warmup: c.warmup}
			got := steadyWindows(spec, c.step, c.stepNo, start, end)
			if len(got) != len(c.want) {
				t.Fatalf("windows %v, want %v", got, c.want)
			}
			for i, w := range got {
				if !w.From.Equal(c.want[i][0]) || !w.To.Equal(c.want[i][1]) || w.Label != c.label {
					t.Errorf("window %d: %q %s..%s, want %q %s..%s", i, w.Label, w.From, w.To, c.label, c.want[i][0], c.want[i][1])
				}
			}
		})
	}
}
