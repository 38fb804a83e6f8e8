package cli

import (
	"fmt"
	"strings"

	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/workload"
)

// runClients returns the most clients a run connects at once: -c, or for a
// workload.Grouper (chbench) the sum of its groups' clients, which its own
// flags give in place of -c. A Grouper runs closed-loop groups of fixed
// sizes: a sweep, an open loop or --read-dsn is refused.
func runClients(w workload.Workload, f *runFlags) (int, error) {
	gr, ok := grouper(w)
	if !ok {
		return maxClients(f.steps), nil
	}
	name := w.Meta().Name
	switch {
	case f.Clients != "1":
		return 0, usagef("%s runs several client groups, each with its own clients (%s): leave out -c", name, groupFlags(w))
	case f.steps[0].Rate > 0 || !f.steps[0].Schedule.Empty():
		return 0, usagef("%s runs closed-loop client groups: leave out -R and --schedule", name)
	case f.ReadDSN != "":
		return 0, usagef("%s runs its own client groups: --read-dsn does not apply", name)
	}
	n := 0
	for _, p := range gr.Groups() {
		n += p.Clients
	}
	return n, nil
}

// groupFlags names a Grouper's flags that set its groups' clients.
func groupFlags(w workload.Workload) string {
	var names []string
	if fl, ok := w.(workload.Flagser); ok {
		for _, p := range w.(workload.Grouper).Groups() {
			if fl.Flags().Lookup(p.Name+"-clients") != nil {
				names = append(names, "--"+p.Name+"-clients")
			}
		}
	}
	if len(names) == 0 {
		return "set by its mode's flags"
	}
	return strings.Join(names, ", ")
}

// splitGroups makes a Grouper's parts the run's client groups, each with
// the load settings of the one group the flags made, and the whole
// workload the source of the run's figures of merit.
func (a *app) splitGroups(spec *session.Spec, w workload.Workload) {
	gr, ok := grouper(w)
	if !ok {
		return
	}
	base := spec.Groups[0]
	spec.Groups = nil
	var desc []string
	for _, p := range gr.Groups() {
		g := base
		g.Name, g.Workload, g.Clients, g.After = p.Name, p.Workload, p.Clients, p.After
		spec.Groups = append(spec.Groups, g)
		desc = append(desc, fmt.Sprintf("%d %s", p.Clients, p.Name))
	}
	spec.Steps = []session.Step{{Clients: spec.Groups[0].Clients}}
	spec.Figures, _ = w.(workload.FigureReporter)
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
