package session

import (
	"fmt"
	"time"

	"github.com/pgarena/pgarena/internal/sampler"
)

// steadyWindows are the stretches of a step that ran from start to end
// under one constant load, for the sampler's "not steady" finding: after
// the ramp (all clients started) and the warm-up, and in an open loop only
// where the target rate is constant. A rising schedule has none.
func steadyWindows(spec *Spec, st Step, stepNo int, start, end time.Time) []sampler.Window {
	label := ""
	if stepNo > 0 {
		label = fmt.Sprintf("step %d: ", stepNo)
	}
	from := start.Add(max(spec.Ramp, spec.Warmup))
	if st.Schedule.Empty() {
		return []sampler.Window{{Label: label, From: from, To: end}}
	}
	spans := st.Schedule.Constant()
	var out []sampler.Window
	for _, sp := range spans {
		w := sampler.Window{Label: label, From: start.Add(sp[0]), To: start.Add(sp[1])}
		if w.From.Before(from) {
			w.From = from
		}
		if w.To.After(end) {
			w.To = end
		}
		if len(spans) > 1 {
			w.Label += fmt.Sprintf("from %s: ", sp[0])
		}
		if w.From.Before(w.To) {
			out = append(out, w)
		}
	}
	return out
}
