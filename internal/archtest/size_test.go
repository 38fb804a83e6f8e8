package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIStaysThin keeps the command line a thin layer over the session:
// no function in internal/cli over 80 lines, run.go under 300.
func TestCLIStaysThin(t *testing.T) {
	dir := filepath.Join("..", "cli")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		path := filepath.Join(dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if lines := fset.Position(f.End()).Line; name == "run.go" && lines >= 300 {
			t.Errorf("internal/cli/run.go has %d lines: the run belongs in internal/session", lines)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > 80 {
				t.Errorf("%s: %s is %d lines (at most 80 in internal/cli)", path, fd.Name.Name, n)
			}
		}
	}
}
