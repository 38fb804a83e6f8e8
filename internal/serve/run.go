package serve

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/report/htmlw"
	"github.com/pgarena/pgarena/internal/store"
)

// runCache keeps recently loaded runs, each with its signature when it was
// read (store.Source.Signature): a run is read again only when its record
// changed (a live run grows by an interval per tick).
type runCache struct {
	st store.Source
	mu sync.Mutex
	m  map[string]cachedRun
}

type cachedRun struct {
	sig string
	run *store.Run
}

// runCacheSize bounds the runs kept in memory (a run with tens of thousands
// of intervals is tens of MB).
const runCacheSize = 16

func newRunCache(st store.Source) *runCache { return &runCache{st: st, m: map[string]cachedRun{}} }

// load returns the run ref names; fresh reads it again even if its
// record looks unchanged (a writer that died changes no file).
func (c *runCache) load(ref string, fresh bool) (*store.Run, string, error) {
	id, err := c.st.Resolve(ref)
	if err != nil {
		return nil, "", err
	}
	sig, err := c.st.Signature(id)
	if err != nil {
		return nil, "", fmt.Errorf("run %s: %w", id, err)
	}
	c.mu.Lock()
	cr, ok := c.m[id]
	c.mu.Unlock()
	if ok && cr.sig == sig && !fresh {
		return cr.run, sig, nil
	}
	run, err := c.st.Load(id)
	if err != nil {
		return nil, "", err
	}
	c.mu.Lock()
	if len(c.m) >= runCacheSize {
		for k := range c.m { // evict any: the cache is a convenience
			delete(c.m, k)
			break
		}
	}
	c.m[id] = cachedRun{sig: sig, run: run}
	c.mu.Unlock()
	return run, sig, nil
}

// runError answers a request for a run that cannot be read: missing (or
// deleted while being read) is 404, anything else 500, in one line.
func runError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, store.ErrNoRun) || errors.Is(err, store.ErrAmbiguous) || errors.Is(err, os.ErrNotExist) {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}

// writeServeBar writes the bar put at the top of report pages served
// here: the list, downloads of the selection (query) and, on a run's page,
// its PNG charts.
func writeServeBar(w *htmlw.Writer, query, run string) {
	w.S(`<nav class="serve" style="padding:.5em 1em;border-bottom:1px solid #d6dde3"><a href="/">runs</a> · download: `)
	for i, d := range [][2]string{{"html", "HTML report"}, {"csv", "CSV"}, {"json", "JSON"}, {"png", "PNG charts (zip)"}} {
		if i > 0 {
			w.S(" · ")
		}
		w.S(`<a href="/download/`, d[0], "?")
		w.URLPath(query)
		w.S(`">`, d[1], "</a>")
	}
	if run != "" {
		w.S(` · <a href="/run/`)
		w.URLPath(run)
		w.S(`/png">PNG charts</a>`)
	}
	w.S("</nav>")
}

// escapeAttr is text/template's HTMLEscapeString: htmlw's escaping, but
// for '+', which it keeps.
func escapeAttr(s string) string {
	var w htmlw.Writer
	for i, part := range strings.Split(s, "+") {
		if i > 0 {
			w.S("+")
		}
		w.T(part)
	}
	return w.String()
}

// handleRun serves a run's report; while the run goes, the page follows it
// (live.js, fed by /run/ID/events).
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	run, _, err := s.runs.load(r.PathValue("id"), false)
	if err != nil {
		runError(w, err)
		return
	}
	rules := autostopHTML(run)
	var extra bytes.Buffer
	if run.Status == metrics.StatusRunning {
		fmt.Fprintf(&extra, `<script src="/static/live.js" data-run="%s"></script>`, escapeAttr(run.ID))
	}
	s.writeReport(w, []*store.Run{run}, "run="+urlEscape(run.ID), reportParts{main: rules, end: extra.Bytes(), run: run.ID})
}

// reportParts are what serve adds to a report page, each safe HTML: top
// after <body>, main at the start of <main> (a section there is swapped in
// by live updates), end before </body>.
type reportParts struct {
	top, main, end []byte
	run            string // the run of a run page, for its PNG charts link
}

// writeReport renders runs with report.HTML and adds serve's navigation
// bar and the parts.
func (s *Server) writeReport(w http.ResponseWriter, runs []*store.Run, query string, parts reportParts) {
	var page bytes.Buffer
	if err := report.HTML(&page, runs); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var bar htmlw.Writer
	writeServeBar(&bar, query, parts.run)
	html := page.Bytes()
	head, tail, ok := bytes.Cut(html, []byte("<body>\n"))
	body, foot, ok2 := bytes.Cut(tail, []byte("</body>"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if !ok || !ok2 {
		_, _ = w.Write(html) // a report without the markers: as it is
		return
	}
	before, after, ok := bytes.Cut(body, []byte("<main>\n"))
	if !ok {
		before, after = body, nil
	} else {
		before = append(before[:len(before):len(before)], "<main>\n"...)
	}
	for _, part := range [][]byte{head, []byte("<body>\n"), bar.Bytes(), parts.top, before, parts.main, after, parts.end, []byte("</body>"), foot} {
		_, _ = w.Write(part)
	}
}

// handleEvents streams server-sent events while a run goes: "update" each
// time its directory changed, "end" once it is no longer running, "gone"
// when it cannot be read any more (deleted).
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	id := r.PathValue("id")
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	send := func(event, data string) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		fl.Flush()
	}
	send("hello", "")
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	last, polls := "", 0
	for {
		polls++
		// Every few polls read the run even if no file changed: a writer
		// killed with -9 changes nothing, but the run is interrupted.
		run, sig, err := s.runs.load(id, polls%5 == 0)
		switch {
		case err != nil:
			send("gone", strings.ReplaceAll(err.Error(), "\n", " "))
			return
		case run.Status != metrics.StatusRunning:
			send("end", run.Status)
			return
		case sig != last && last != "":
			send("update", fmt.Sprint(len(run.Intervals)))
		}
		last = sig
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
