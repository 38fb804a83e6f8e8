package serve

import (
	"net/http"
	"time"

	"github.com/pgarena/pgarena/internal/plan"
)

type planPage struct {
	Name     string
	File     string // the plan file, when serve was given it
	Error    string
	Cells    []plan.CellState
	Counts   map[string]int
	ETA      string
	Foreign  int
	FromTags bool
}

// handlePlan shows a plan's cells: done, running, failed or pending, each
// with the run that decided it, and the ETA of the rest. With the plan's
// file (--plan) every cell is known; without it, the cells that have runs.
func (s *Server) handlePlan(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p := planPage{Name: name}
	var st *plan.Status
	for _, path := range s.opts.Plans {
		pl, err := plan.Load(path)
		if err != nil {
			p.Error = err.Error()
			continue
		}
		if pl.Name == name {
			if st, err = plan.State(pl, s.store); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			p.File = path
			break
		}
	}
	if st == nil {
		runs, err := s.store.List()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		st = plan.TaggedState(name, runs)
		p.FromTags = true
		if len(st.Cells) == 0 {
			http.Error(w, "no runs of plan "+name, http.StatusNotFound)
			return
		}
	}
	p.Cells, p.Counts, p.Foreign = st.Cells, st.Counts(), st.Foreign
	if eta, ok := st.ETA(); ok {
		p.ETA = eta.Round(time.Second).String()
	}
	render(w, "pgarena: plan "+p.Name, p.write)
}
