package all_test

import (
	"reflect"
	"testing"

	"github.com/pgarena/pgarena/internal/workload"
)

// TestCapabilitiesMatchTheirMethods fails when a workload has a method of
// a capability's name but not the capability: a signature that drifted
// from its interface silently turns the capability off (figures, checks).
func TestCapabilitiesMatchTheirMethods(t *testing.T) {
	caps := []reflect.Type{
		reflect.TypeFor[workload.Preparer](), reflect.TypeFor[workload.Checker](),
		reflect.TypeFor[workload.FigureReporter](), reflect.TypeFor[workload.Explainer](),
		reflect.TypeFor[workload.ConnSetup](), reflect.TypeFor[workload.StatementLister](),
		reflect.TypeFor[workload.RunValidator](), reflect.TypeFor[workload.Segmenter](),
		reflect.TypeFor[workload.InitPreparer](), reflect.TypeFor[workload.Distributor](),
		reflect.TypeFor[workload.Functioner](), reflect.TypeFor[workload.Slicer](),
	}
	for _, meta := range workload.All() {
		wt := reflect.TypeOf(meta.New())
		for _, c := range caps {
			if wt.Implements(c) {
				continue
			}
			for i := range c.NumMethod() {
				if m, ok := wt.MethodByName(c.Method(i).Name); ok {
					t.Errorf("%s: has %s (%s) but is no %s", meta.Name, m.Name, m.Type, c.Name())
				}
			}
		}
	}
}
