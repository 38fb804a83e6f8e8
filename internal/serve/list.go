package serve

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/store"
)

// listRow is one run of the runs list.
type listRow struct {
	store.RunInfo
	Target string
	Failed int64
	NOPM   float64 // TPC-C's figure of merit; 0 when the run has none
	Repl   string  // replication and failover figures (replicationCell)
}

// Headline is the run's main figure: NOPM for TPC-C runs, else tps.
func (r listRow) Headline() string {
	if r.NOPM > 0 {
		return fmt.Sprintf("%.0f NOPM", r.NOPM)
	}
	if r.TPS == 0 && r.End.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%.1f tps", r.TPS)
}

// extras are what the list shows beyond store.RunInfo, read from spec.json
// and summary.json once per change of their modification times.
type extras struct {
	specMod, sumMod time.Time
	target          string
	failed          int64
	nopm            float64
}

// listCache keeps each run's extras, so that a list of thousands of runs
// stats two files per run instead of decoding them.
type listCache struct {
	mu sync.Mutex
	m  map[string]extras
}

func newListCache() *listCache { return &listCache{m: map[string]extras{}} }

// rows lists the store's runs with their extras, newest first.
func (s *Server) rows() ([]listRow, error) {
	infos, err := s.store.List()
	if err != nil {
		return nil, err
	}
	rows := make([]listRow, len(infos))
	seen := make(map[string]bool, len(infos))
	for i, ri := range infos {
		ex := s.list.get(ri.Dir, ri.ID)
		rows[i] = listRow{RunInfo: ri, Target: ex.target, Failed: ex.failed, NOPM: ex.nopm, Repl: s.repl.get(ri.Dir)}
		seen[ri.ID] = true
	}
	s.list.prune(seen)
	return rows, nil
}

func (c *listCache) get(dir, id string) extras {
	specMod, sumMod := modTime(filepath.Join(dir, store.SpecFile)), modTime(filepath.Join(dir, store.SummaryFile))
	c.mu.Lock()
	ex, ok := c.m[id]
	c.mu.Unlock()
	if ok && ex.specMod.Equal(specMod) && ex.sumMod.Equal(sumMod) {
		return ex
	}
	ex = readExtras(dir)
	ex.specMod, ex.sumMod = specMod, sumMod
	c.mu.Lock()
	c.m[id] = ex
	c.mu.Unlock()
	return ex
}

func (c *listCache) prune(seen map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.m {
		if !seen[id] {
			delete(c.m, id)
		}
	}
}

func modTime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// readExtras decodes the parts of spec.json and summary.json the list
// needs; what cannot be read is left empty (the list still shows the run).
func readExtras(dir string) extras {
	var ex extras
	var sp struct {
		Target string `json:"target"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, store.SpecFile)); err == nil && json.Unmarshal(b, &sp) == nil {
		ex.target = sp.Target
	}
	var sum struct {
		Failed  int64 `json:"failed"`
		Figures []struct {
			Name  string  `json:"name"`
			Tx    string  `json:"tx"`
			Value float64 `json:"value"`
		} `json:"figures"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, store.SummaryFile)); err == nil && json.Unmarshal(b, &sum) == nil {
		ex.failed = sum.Failed
		for _, f := range sum.Figures {
			if f.Name == "nopm" && f.Tx == "" {
				ex.nopm = f.Value
			}
		}
	}
	return ex
}

// listQuery is the list's filters and order, from the URL.
type listQuery struct {
	Label, Workload, Since, Sort, Order string
	since                               time.Time
}

func parseListQuery(r *http.Request, now time.Time) (listQuery, error) {
	q := r.URL.Query()
	lq := listQuery{Label: q.Get("label"), Workload: q.Get("workload"), Since: q.Get("since"),
		Sort: cmp.Or(q.Get("sort"), "created"), Order: cmp.Or(q.Get("order"), "desc")}
	if lq.Label != "" {
		if _, err := path.Match(lq.Label, ""); err != nil {
			return lq, fmt.Errorf("label filter %q is not a glob pattern: %v", lq.Label, err)
		}
	}
	if lq.Since != "" {
		if d, err := time.ParseDuration(lq.Since); err == nil {
			lq.since = now.Add(-d)
		} else if t, err := time.ParseInLocation("2006-01-02", lq.Since, time.Local); err == nil {
			lq.since = t
		} else {
			return lq, errors.New("since: give a duration (24h) or a date (2026-01-31)")
		}
	}
	if !slices.Contains(sortKeys, lq.Sort) {
		return lq, fmt.Errorf("sort: one of %s", strings.Join(sortKeys, ", "))
	}
	return lq, nil
}

var sortKeys = []string{"created", "label", "workload", "status", "tps", "p95", "failed"}

func (lq listQuery) keep(r *listRow) bool {
	if lq.Label != "" {
		if ok, _ := path.Match(lq.Label, r.Label); !ok {
			return false
		}
	}
	if lq.Workload != "" && r.Workload != lq.Workload {
		return false
	}
	return lq.since.IsZero() || !r.Created.Before(lq.since)
}

func (lq listQuery) sort(rows []listRow) {
	by := func(a, b *listRow) int {
		switch lq.Sort {
		case "label":
			return strings.Compare(a.Label, b.Label)
		case "workload":
			return strings.Compare(a.Workload, b.Workload)
		case "status":
			return strings.Compare(a.Status, b.Status)
		case "tps":
			return cmp.Compare(a.TPS, b.TPS)
		case "p95":
			return cmp.Compare(a.P95MS, b.P95MS)
		case "failed":
			return cmp.Compare(a.Failed, b.Failed)
		}
		return a.Created.Compare(b.Created)
	}
	slices.SortStableFunc(rows, func(a, b listRow) int {
		if lq.Order == "asc" {
			return by(&a, &b)
		}
		return by(&b, &a)
	})
}

// SortLink is the list's URL sorted by key (the other order when it already is).
func (lq listQuery) SortLink(key string) string {
	order := "desc"
	if lq.Sort == key && lq.Order == "desc" {
		order = "asc"
	}
	v := make([]string, 0, 5)
	for _, p := range [][2]string{{"label", lq.Label}, {"workload", lq.Workload}, {"since", lq.Since}, {"sort", key}, {"order", order}} {
		if p[1] != "" {
			v = append(v, p[0]+"="+urlEscape(p[1]))
		}
	}
	return "/?" + strings.Join(v, "&")
}

// planGroup is a plan's runs in the list, ordered by cell and repeat.
type planGroup struct {
	Name string
	Rows []listRow
}

type listPage struct {
	Query     listQuery
	Error     string
	Dir       string
	Total     int
	Rows      []listRow
	Plans     []planGroup
	Workloads []string
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	all, err := s.rows()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p := listPage{Dir: s.store.Dir(), Total: len(all)}
	lq, err := parseListQuery(r, s.opts.Now())
	p.Query = lq
	if err != nil {
		p.Error = err.Error()
		lq = listQuery{Sort: "created", Order: "desc"}
	}
	plans := map[string]*planGroup{}
	wl := map[string]bool{}
	for i := range all {
		row := &all[i]
		wl[row.Workload] = true
		if !lq.keep(row) {
			continue
		}
		if row.Plan == "" {
			p.Rows = append(p.Rows, *row)
			continue
		}
		g := plans[row.Plan]
		if g == nil {
			g = &planGroup{Name: row.Plan}
			plans[row.Plan] = g
		}
		g.Rows = append(g.Rows, *row)
	}
	lq.sort(p.Rows)
	for _, g := range plans {
		slices.SortStableFunc(g.Rows, func(a, b listRow) int {
			return cmp.Or(strings.Compare(a.CellName, b.CellName), cmp.Compare(a.Repeat, b.Repeat), b.Created.Compare(a.Created))
		})
		p.Plans = append(p.Plans, *g)
	}
	slices.SortFunc(p.Plans, func(a, b planGroup) int { return strings.Compare(a.Name, b.Name) })
	for k := range wl {
		p.Workloads = append(p.Workloads, k)
	}
	slices.Sort(p.Workloads)
	render(w, "list", p)
}
