package report

import (
	"bytes"
	_ "embed"
	"html/template"
	"testing"

	"github.com/pgarena/pgarena/internal/metrics"
)

// The plan's report was rendered by html/template from this template; it
// is now written by hand (plan_render.go) and compared with the template.

//go:embed testdata/templates/plan.html.tmpl
var referencePlanText string

var referencePlan = template.Must(template.New("plan").Funcs(template.FuncMap{"est": fmtEstimate}).Parse(referencePlanText))

func TestPlanHTMLSameAsTemplate(t *testing.T) {
	t.Parallel()
	replicas := planFixture(false)
	for i := range replicas.Rows {
		if r := replicas.Rows[i].Run; r != nil && i%3 != 0 {
			r.Summary.Replication = &metrics.Replication{CatchUpS: 0.5, CaughtUp: i%2 == 0, SustainableTPS: r.Summary.TPS * 0.9}
		}
	}
	hostile := planFixture(true)
	hostile.Name, hostile.File, hostile.Axes = hostileValues[0], hostileValues[2], []string{hostileValues[1]}
	for i := range hostile.Rows {
		r := &hostile.Rows[i]
		r.CellName, r.Workload, r.Axes = hostileValues[i%7], hostileValues[(i+1)%7], []string{hostileValues[(i+2)%7]}
		r.State, r.Run.ID, r.Run.Status = hostileValues[(i+3)%7], hostileValues[(i+4)%7], hostileValues[(i+5)%7]
		r.Run.Summary.StopReason, r.Run.Spec.PgarenaVersion = hostileValues[(i+6)%7], hostileValues[i%7]
		r.Run.Server.Version = hostileValues[(i+1)%7]
	}
	emptyCell := planFixture(false)
	emptyCell.Rows = emptyCell.Rows[:1]
	emptyCell.Rows[0].Run, emptyCell.Rows[0].State = nil, "pending"
	for name, d := range map[string]*PlanData{"tps": planFixture(false), "nopm": planFixture(true),
		"replicas": replicas, "hostile": hostile, "pending": emptyCell} {
		t.Run(name, func(t *testing.T) {
			var got, want bytes.Buffer
			if err := PlanHTML(&got, d); err != nil {
				t.Fatal(err)
			}
			if err := referencePlan.Execute(&want, newPlanPage(d)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				i := firstDiff(got.Bytes(), want.Bytes())
				t.Fatalf("the page differs from html/template's at byte %d:\n got: %q\nwant: %q", i, around(got.Bytes(), i), around(want.Bytes(), i))
			}
		})
	}
}
