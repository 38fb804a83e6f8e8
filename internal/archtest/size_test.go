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

// maxFuncLines bounds a function of the packages in shortFuncDirs: a
// longer one is a sequence of phases that want names (methods on a struct
// holding what they share).
const maxFuncLines = 80

// shortFuncDirs are the packages whose functions stay within
// maxFuncLines: the command line (a thin layer over the session), the
// session and the driver.
var shortFuncDirs = []string{"cli", "session", "driver"}

// TestCLIStaysThin keeps the command line a thin layer over the session:
// run.go under 300 lines (and its functions short: TestFunctionsStayShort).
func TestCLIStaysThin(t *testing.T) {
	for _, f := range parseDir(t, filepath.Join("..", "cli")) {
		if lines := f.fset.Position(f.file.End()).Line; filepath.Base(f.path) == "run.go" && lines >= 300 {
			t.Errorf("internal/cli/run.go has %d lines: the run belongs in internal/session", lines)
		}
	}
}

// TestFunctionsStayShort keeps every function of shortFuncDirs within
// maxFuncLines.
func TestFunctionsStayShort(t *testing.T) {
	for _, dir := range shortFuncDirs {
		for _, f := range parseDir(t, filepath.Join("..", dir)) {
			for _, d := range f.file.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				if n := f.fset.Position(fd.End()).Line - f.fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
					t.Errorf("%s: %s is %d lines (at most %d in internal/%s)", f.path, fd.Name.Name, n, maxFuncLines, dir)
				}
			}
		}
	}
}

type parsedFile struct {
	path string
	fset *token.FileSet
	file *ast.File
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) []parsedFile {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []parsedFile
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
		out = append(out, parsedFile{path: path, fset: fset, file: f})
	}
	return out
}
