package workload

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestCapabilityTable: the package doc's table of optional capabilities
// names every interface of the contract beyond Workload and Worker, and
// nothing else.
func TestCapabilityTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "workload.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			if _, isIface := ts.Type.(*ast.InterfaceType); isIface && ts.Name.IsExported() {
				declared = append(declared, ts.Name.Name)
			}
		}
	}
	var table []string
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		if !strings.HasPrefix(line, "\t") {
			continue
		}
		if name := strings.Fields(line)[0]; name[0] >= 'A' && name[0] <= 'Z' {
			table = append(table, name)
		}
	}
	slices.Sort(declared)
	slices.Sort(table)
	if !slices.Equal(declared, table) {
		t.Errorf("interfaces %v, but the package doc's table lists %v (Workload and Worker head its two parts)", declared, table)
	}
}
