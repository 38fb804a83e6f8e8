package serve

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/store"
)

// listRow is one run of the runs list.
type listRow struct {
	store.RunInfo
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

// rows lists the store's runs, newest first.
func (s *Server) rows() ([]listRow, error) {
	infos, err := s.store.List()
	if err != nil {
		return nil, err
	}
	rows := make([]listRow, len(infos))
	for i, ri := range infos {
		rows[i] = listRow{RunInfo: ri}
	}
	return rows, nil
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
	p := listPage{Dir: s.store.Where(), Total: len(all)}
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
	render(w, "pgarena: runs", p.write)
}
