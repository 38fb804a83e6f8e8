package serve

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/store"
)

// pngCache keeps the charts of recently rendered selections, each with the
// signatures of its runs' directories: a live run's charts are drawn again
// once it has grown, a finished run's only once.
type pngCache struct {
	mu sync.Mutex
	m  map[string]cachedPNGs
}

type cachedPNGs struct {
	sig    string
	charts []report.PNGChart
}

const pngCacheSize = 8

// charts renders (or finds) the PNG charts of runs; sigs are their
// directory signatures.
func (c *pngCache) charts(runs []*store.Run, sigs []string) ([]report.PNGChart, error) {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	key, sig := strings.Join(ids, "\x00"), strings.Join(sigs, "\x00")
	c.mu.Lock()
	cp, ok := c.m[key]
	c.mu.Unlock()
	if ok && cp.sig == sig {
		return cp.charts, nil
	}
	charts, err := report.PNGs(runs)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]cachedPNGs{}
	}
	if len(c.m) >= pngCacheSize {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = cachedPNGs{sig: sig, charts: charts}
	c.mu.Unlock()
	return charts, nil
}

// runPNGs loads the run named in the path and its charts.
func (s *Server) runPNGs(w http.ResponseWriter, r *http.Request) (*store.Run, []report.PNGChart, bool) {
	run, sig, err := s.runs.load(r.PathValue("id"), false)
	if err != nil {
		runError(w, err)
		return nil, nil, false
	}
	charts, err := s.pngs.charts([]*store.Run{run}, []string{sig})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil, nil, false
	}
	return run, charts, true
}

// handlePNGList lists a run's charts as PNG downloads.
func (s *Server) handlePNGList(w http.ResponseWriter, r *http.Request) {
	run, charts, ok := s.runPNGs(w, r)
	if !ok {
		return
	}
	page := &pngPage{ID: run.ID, Charts: charts, W: report.PNGWidth, H: report.PNGHeight}
	render(w, "pgarena: PNG charts", page.write)
}

// handlePNG serves one chart of a run; a name that is not one of its
// charts is 404.
func (s *Server) handlePNG(w http.ResponseWriter, r *http.Request) {
	run, charts, ok := s.runPNGs(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	for _, c := range charts {
		if c.Name == name {
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", "pgarena-"+run.ID+"-"+c.Name))
			_, _ = w.Write(c.Data)
			return
		}
	}
	// The name is not echoed: it is whatever the request said.
	http.Error(w, fmt.Sprintf("run %s has no such chart (its charts: /run/%s/png)", run.ID, run.ID), http.StatusNotFound)
}

// writePNGZip writes a zip of the selection's PNG charts.
func (s *Server) writePNGZip(buf *bytes.Buffer, runs []*store.Run) error {
	sigs := make([]string, len(runs))
	for i, r := range runs {
		_, sig, err := s.runs.load(r.ID, false)
		if err != nil {
			return err
		}
		sigs[i] = sig
	}
	charts, err := s.pngs.charts(runs, sigs)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(buf)
	for _, c := range charts {
		f, err := zw.Create(c.Name)
		if err != nil {
			return err
		}
		if _, err := f.Write(c.Data); err != nil {
			return err
		}
	}
	return zw.Close()
}
