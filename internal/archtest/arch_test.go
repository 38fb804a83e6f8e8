package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/pgarena/pgarena"

// pkg is one package of the module: its import path and non-test imports.
type pkg struct {
	path    string
	imports map[string]bool
	files   []*ast.File
}

func loadPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		ip := module
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		p := pkgs[ip]
		if p == nil {
			p = &pkg{path: ip, imports: map[string]bool{}}
			pkgs[ip] = p
		}
		p.files = append(p.files, f)
		for _, imp := range f.Imports {
			s, _ := strconv.Unquote(imp.Path.Value)
			p.imports[s] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 5 {
		t.Fatalf("found only %d packages: is the walk rooted right?", len(pkgs))
	}
	return pkgs
}

// closure returns every import reachable from p, following module packages.
func closure(pkgs map[string]*pkg, p *pkg) map[string]bool {
	seen := map[string]bool{}
	var visit func(*pkg)
	visit = func(p *pkg) {
		for imp := range p.imports {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			if q := pkgs[imp]; q != nil {
				visit(q)
			}
		}
	}
	visit(p)
	return seen
}

func within(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func TestImportRules(t *testing.T) {
	pkgs := loadPackages(t)
	in := func(s string) string { return module + "/internal/" + s }
	rules := []struct {
		from       string
		transitive bool
		forbidden  []string
	}{
		{in("workload"), false, []string{in("driver"), in("metrics"), in("store"), in("target"), in("report"), in("loader")}},
		{in("driver"), true, []string{in("store"), in("report")}},
		{in("report"), true, []string{"github.com/jackc/pgx/v5", in("target"), in("driver"), in("loader")}},
		{in("store"), true, []string{"github.com/jackc/pgx/v5"}},
		{in("metrics"), true, []string{"github.com/jackc/pgx/v5"}},
	}
	checked := 0
	var paths []string
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, r := range rules {
		for _, path := range paths {
			if !within(path, r.from) {
				continue
			}
			checked++
			imports := pkgs[path].imports
			if r.transitive {
				imports = closure(pkgs, pkgs[path])
			}
			for imp := range imports {
				for _, bad := range r.forbidden {
					if within(imp, bad) {
						t.Errorf("%s imports %s (forbidden by DESIGN.md)", path, imp)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package matched any rule")
	}
}

// TestOnlyCLIPrints keeps terminal output and exits in the cli package and
// main.
func TestOnlyCLIPrints(t *testing.T) {
	pkgs := loadPackages(t)
	for path, p := range pkgs {
		if within(path, module+"/internal/cli") || within(path, module+"/cmd") || within(path, module+"/internal/pgtest") {
			continue
		}
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" {
					switch sel.Sel.Name {
					case "Stdout", "Stderr", "Exit":
						t.Errorf("%s uses os.%s: only internal/cli and cmd may", path, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
