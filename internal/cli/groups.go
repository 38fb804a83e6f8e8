package cli

import (
	"fmt"
	"strings"

	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/workload"
)

// groupsCreated makes a Grouper's run (internal/runconfig made its parts
// the client groups) name its groups' clients when it is created.
func (a *app) groupsCreated(spec *session.Spec, w workload.Workload) {
	gr, ok := runconfig.GrouperOf(w)
	if !ok {
		return
	}
	var desc []string
	for _, p := range gr.Groups() {
		desc = append(desc, fmt.Sprintf("%d %s", p.Clients, p.Name))
	}
	spec.Hooks.Created = func(id, dir string) {
		a.plan.runID = id
		what := strings.Join(desc, " + ") + " clients"
		if seg := spec.Segment; !seg.Whole() { // set by applySegment, before the run
			desc = desc[:0]
			for _, p := range gr.Groups() {
				lo, hi := seg.Block(p.Clients)
				desc = append(desc, fmt.Sprintf("%d of %d %s", hi-lo, p.Clients, p.Name))
			}
			what = "segment " + seg.String() + ": " + strings.Join(desc, " + ") + " clients"
		}
		fmt.Fprintf(a.Stderr, "run %s: %s, %s, results in %s\n", id, w.Meta().Name, what, dir)
	}
}
