package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/session"
)

// TestProgressLineDueTimes: a line goes out at every multiple of -P of run
// time, however late the clock's tick that ends it was served; a late tick
// does not merge the next two lines.
func TestProgressLineDueTimes(t *testing.T) {
	start := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		every time.Duration
		ends  []time.Duration // the ticks as served
		want  []string        // the lines' heads
	}{
		{time.Second, []time.Duration{1005 * time.Millisecond, 2 * time.Second, 3011 * time.Millisecond, 4 * time.Second},
			[]string{"progress: 1.0 s", "progress: 2.0 s", "progress: 3.0 s", "progress: 4.0 s"}},
		{2 * time.Second, []time.Duration{time.Second, 2004 * time.Millisecond, 3 * time.Second, 4 * time.Second, 5 * time.Second, 6 * time.Second},
			[]string{"progress: 2.0 s", "progress: 4.0 s", "progress: 6.0 s"}},
		// a tick served a second and a half late covers what it missed
		{time.Second, []time.Duration{time.Second, 3500 * time.Millisecond, 4 * time.Second},
			[]string{"progress: 1.0 s", "progress: 3.5 s", "progress: 4.0 s"}},
	}
	for _, c := range cases {
		var out bytes.Buffer
		p := &progressOutput{w: &out, every: c.every}
		from := start
		for _, e := range c.ends {
			iv := metrics.Interval{Start: from, End: start.Add(e)}
			from = iv.End
			if err := p.Write(session.Record{Interval: &iv}); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			head, _, _ := strings.Cut(l, ",")
			got = append(got, head)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("-P %s, ticks at %v: lines %q, want %q", c.every, c.ends, got, c.want)
		}
	}
}
