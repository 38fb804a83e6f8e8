package output_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/output/postgres"
	"github.com/pgarena/pgarena/internal/output/prometheus"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/report/reporttest"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/store"
)

func TestMain(m *testing.M) {
	output.Register(prometheus.Kind)
	os.Exit(pgtest.Main(m))
}

// dashboard is what the tests read of a Grafana dashboard.
type dashboard struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos *struct {
		W, H int
	} `json:"gridPos"`
	Targets []struct {
		RefID  string `json:"refId"`
		RawSQL string `json:"rawSql"`
		Expr   string `json:"expr"`
	} `json:"targets"`
}

func readDashboard(t *testing.T, name string) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "grafana", name))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 || len(d.Panels) == 0 {
		t.Fatalf("%s: uid %q, title %q, schemaVersion %d, %d panels: not a Grafana dashboard", name, d.UID, d.Title, d.SchemaVersion, len(d.Panels))
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if p.ID == 0 || ids[p.ID] || p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.H == 0 {
			t.Errorf("%s: panel %q: id %d (unique, not 0) and a gridPos are required", name, p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", name, p.Title)
		}
	}
	return d
}

// grafanaSQL expands what Grafana's PostgreSQL data source expands in a
// query: its time macros over a range, and the template variables vars
// (a value already quoted as Grafana quotes it).
func grafanaSQL(sql string, vars map[string]string) string {
	const from, to = "'2026-01-01T00:00:00Z'", "'2027-01-01T00:00:00Z'"
	sql = regexp.MustCompile(`\$__timeFilter\(([^)]+)\)`).ReplaceAllString(sql, "$1 BETWEEN "+from+" AND "+to)
	sql = strings.NewReplacer("$__timeFrom()", from, "$__timeTo()", to).Replace(sql)
	return regexp.MustCompile(`\$\{?(\w+)\}?`).ReplaceAllStringFunc(sql, func(m string) string {
		name := strings.Trim(m, "${}")
		if v, ok := vars[name]; ok {
			return v
		}
		return m
	})
}

// TestResultsDashboard: every query of the results database's dashboard
// (panels and template variables) runs against a results database holding
// published runs, and each panel's returns rows.
func TestResultsDashboard(t *testing.T) {
	t.Parallel()
	d := readDashboard(t, "pgarena-results.json")
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	ids, err := reporttest.Write(dir, reporttest.Standard()[:4])
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := pgtest.Connect(t, dsn, pgx.QueryExecModeCacheDescribe) // as target.Connect's
	if err := postgres.Migrate(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		r, err := store.OpenReadOnly(dir).Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := postgres.Publish(ctx, c, r); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"label": "'pool-a','pool-b'", "run": ids[0], "run_b": ids[3]}
	count := func(what, sql string) int {
		t.Helper()
		q := grafanaSQL(sql, vars)
		if strings.Contains(q, "$") {
			t.Errorf("%s: not expanded: %s", what, q)
			return 0
		}
		n := 0
		rows, err := c.Query(ctx, q)
		if err == nil {
			for rows.Next() {
				n++
			}
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			t.Errorf("%s: %v\n%s", what, err, q)
		}
		return n
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(string); ok && v.Type == "query" {
			if count("variable "+v.Name, q) == 0 {
				t.Errorf("variable %s has no values", v.Name)
			}
		}
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if tg.RawSQL == "" {
				t.Errorf("panel %q: query %s has no rawSql", p.Title, tg.RefID)
			} else if n := count("panel "+p.Title, tg.RawSQL); n == 0 {
				t.Errorf("panel %q: no rows", p.Title)
			}
		}
	}
}

// TestLiveDashboard: every metric the live dashboard's PromQL names is
// served by --out prometheus during a run.
func TestLiveDashboard(t *testing.T) {
	t.Parallel()
	d := readDashboard(t, "pgarena-live.json")
	o, err := output.New("prometheus=127.0.0.1:0", output.Params{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.(interface{ Close() error }).Close()
	lat := metrics.NewHistogram()
	_ = lat.RecordValue(1500)
	now := time.Now()
	for _, r := range []session.Record{
		{Start: &session.RunStart{ID: "r1", Spec: store.RunSpec{Workload: "tpcb"}}},
		{Interval: &metrics.Interval{Seq: 1, Start: now.Add(-time.Second), End: now, Connected: 1,
			Tx: []metrics.TxStats{{Name: "tpcb", Count: 1, Latency: lat, Service: lat}}}},
		{Samples: []store.Sample{{Time: now, Source: "activity", Values: map[string]float64{"pg.active": 1}}}},
	} {
		if err := o.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	addr := o.(interface{ Addr() string }).Addr()
	resp, err := http.Get("http://" + strings.Replace(addr, "127.0.0.1", "localhost", 1) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	served := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			served[f[2]] = true
			if f[3] == "histogram" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					served[f[2]+s] = true
				}
			}
		}
	}
	var exprs []string
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			exprs = append(exprs, q["query"].(string))
		}
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	named := 0
	for _, e := range exprs {
		for _, m := range regexp.MustCompile(`\bpgarena_\w+`).FindAllString(e, -1) {
			named++
			if !served[m] {
				t.Errorf("%s is not served by --out prometheus (served: %v)", m, served)
			}
		}
	}
	if named < 8 {
		t.Errorf("the dashboard names %d metrics", named)
	}
}
