package archtest

import (
	"fmt"
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

// allowedOutside are the packages that may print, exit, log and read the
// process environment: the CLI, main, the test helper (which reads its own
// variables, such as PGARENA_REQUIRE_PG) and the benchmarks' own programs
// (bench/...: commands, not parts of pgarena).
var allowedOutside = []string{module + "/internal/cli", module + "/cmd", module + "/internal/pgtest", module + "/bench"}

// pkg is one package of the module: its import path and non-test imports.
type pkg struct {
	path    string
	imports map[string]bool
	files   []*ast.File
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func loadPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	root := repoRoot(t)
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
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

// closure returns every import reachable from p: module packages are
// followed, third-party and standard imports are recorded where they are
// met (so a rule on pgx or cobra catches them behind any module package).
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

// via returns the chain of imports from p to bad (a module package, or a
// third-party path and what is under it), for the error message
// ("a -> b -> c").
func via(pkgs map[string]*pkg, from, bad string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		p := pkgs[cur]
		if p == nil {
			continue
		}
		imps := make([]string, 0, len(p.imports))
		for imp := range p.imports {
			imps = append(imps, imp)
		}
		sort.Strings(imps)
		for _, imp := range imps {
			if _, ok := prev[imp]; ok {
				continue
			}
			prev[imp] = cur
			if imp == bad || !within(bad, module) && within(imp, bad) {
				var chain []string
				for n := imp; n != ""; n = prev[n] {
					chain = append([]string{strings.TrimPrefix(n, module+"/")}, chain...)
				}
				return strings.Join(chain, " -> ")
			}
			queue = append(queue, imp)
		}
	}
	return ""
}

func within(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func exists(pkgs map[string]*pkg, prefix string) bool {
	for p := range pkgs {
		if within(p, prefix) {
			return true
		}
	}
	return false
}

// modulePath turns an allow-list name into an import path: "internal/...",
// "cmd/..." and "bench/..." are this module's, anything else is taken as
// it is.
func modulePath(s string) string {
	for _, top := range []string{"internal", "cmd", "bench"} {
		if within(s, top) {
			return module + "/" + s
		}
	}
	return s
}

// permits reports whether an allow-list entry lets a package reach imp.
func permits(entry []string, imp string) bool {
	for _, e := range entry {
		if sub, ok := strings.CutSuffix(e, "/..."); ok {
			if within(imp, modulePath(sub)) {
				return true
			}
			continue
		}
		if p := modulePath(e); p == imp || !within(p, module) && within(imp, p) {
			return true
		}
	}
	return false
}

// standard reports whether an import path is the standard library's (its
// first element has no dot).
func standard(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

// checkAllowed reports every package of pkgs without an entry in allowed,
// and every import it reaches (transitively, through module packages) that
// its entry does not permit, with the chain of imports that leads to it.
func checkAllowed(pkgs map[string]*pkg, allowed map[string][]string) (violations []string) {
	var paths []string
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		rel := strings.TrimPrefix(path, module+"/")
		entry, ok := allowed[rel]
		if !ok {
			violations = append(violations, fmt.Sprintf("%s has no entry in the allow list (%s): list what it may import", rel, allowListFile))
			continue
		}
		var bad []string
		for imp := range closure(pkgs, pkgs[path]) {
			if !standard(imp) && !permits(entry, imp) {
				bad = append(bad, imp)
			}
		}
		sort.Strings(bad)
		for _, imp := range bad {
			violations = append(violations, fmt.Sprintf("%s imports %s (%s), which its entry in %s does not allow",
				rel, strings.TrimPrefix(imp, module+"/"), via(pkgs, path, imp), allowListFile))
		}
	}
	return violations
}

const allowListFile = "internal/archtest/deps_test.go"

// readRequired returns the modules go.mod requires.
func readRequired(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && strings.Contains(f[0], ".") && strings.HasPrefix(f[1], "v") {
			req[f[0]] = true
		}
	}
	return req
}

func TestImportAllowList(t *testing.T) {
	pkgs := loadPackages(t)
	for _, v := range checkAllowed(pkgs, allowed) {
		t.Error(v)
	}
	// No stale entries: every package and module named exists.
	required := readRequired(t)
	for name, entry := range allowed {
		if pkgs[modulePath(name)] == nil {
			t.Errorf("%s: entry for %s, which does not exist", allowListFile, name)
		}
		for _, e := range entry {
			p := modulePath(strings.TrimSuffix(e, "/..."))
			switch {
			case within(p, module):
				if !exists(pkgs, p) {
					t.Errorf("%s: %s may import %s, which does not exist", allowListFile, name, e)
				}
			case !required[p]:
				t.Errorf("%s: %s may import %s, which is not a module in go.mod", allowListFile, name, e)
			}
		}
	}
}

// TestAllowListIsTransitive: a workload reaching metrics through pgerr, a
// store reaching pgx behind a module package, and a package with no
// entry are caught.
func TestAllowListIsTransitive(t *testing.T) {
	in := func(s string) string { return module + "/internal/" + s }
	mk := func(path string, imports ...string) *pkg {
		p := &pkg{path: path, imports: map[string]bool{"fmt": true}}
		for _, i := range imports {
			p.imports[i] = true
		}
		return p
	}
	pkgs := map[string]*pkg{}
	for _, p := range []*pkg{
		mk(in("workload/tpcx"), in("workload"), in("pgerr")),
		mk(in("workload")),
		mk(in("pgerr"), in("metrics"), "github.com/jackc/pgx/v5/pgconn"),
		mk(in("metrics")),
		mk(in("store"), in("pgerr")),
		mk(in("newpkg")),
	} {
		pkgs[p.path] = p
	}
	got := checkAllowed(pkgs, map[string][]string{
		"internal/workload/tpcx": {"internal/workload", "internal/pgerr", pgx},
		"internal/workload":      {},
		"internal/pgerr":         {"internal/metrics", pgx},
		"internal/metrics":       {},
		"internal/store":         {"internal/pgerr", "internal/metrics"},
	})
	want := []string{
		"newpkg has no entry",
		"store imports github.com/jackc/pgx/v5/pgconn (internal/store -> internal/pgerr -> github.com/jackc/pgx/v5/pgconn)",
		"workload/tpcx imports internal/metrics (internal/workload/tpcx -> internal/pgerr -> internal/metrics)",
	}
	if len(got) != len(want) {
		t.Fatalf("violations = %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], "internal/"+want[i]) {
			t.Errorf("violation %d = %q, want prefix %q", i, got[i], "internal/"+want[i])
		}
	}
}

// helpers returns the module's test-helper packages: testHelpers, and any
// package named *test but archtest.
func helpers(t *testing.T, pkgs map[string]*pkg) map[string]bool {
	h := map[string]bool{}
	for _, name := range testHelpers {
		if pkgs[modulePath(name)] == nil {
			t.Errorf("test helper %s does not exist", name)
		}
		h[modulePath(name)] = true
	}
	for path := range pkgs {
		if base := path[strings.LastIndex(path, "/")+1:]; strings.HasSuffix(base, "test") && base != "archtest" {
			h[path] = true
		}
	}
	return h
}

// TestHelpersOnlyInTests: test helpers (pgtest, golden, loadertest,
// reporttest, ...) start clusters, read test variables and call
// testing.TB; only _test.go files and other helpers may import them.
func TestHelpersOnlyInTests(t *testing.T) {
	pkgs := loadPackages(t)
	h := helpers(t, pkgs)
	for path, p := range pkgs {
		if h[path] {
			continue
		}
		for imp := range closure(pkgs, p) {
			if h[imp] {
				t.Errorf("%s imports the test helper %s (%s): only _test.go files may", path, imp, via(pkgs, path, imp))
			}
		}
	}
}

// TestOnlyCLIImportsCobra: no package outside internal/cli and cmd
// reaches cobra, directly or through another package.
func TestOnlyCLIImportsCobra(t *testing.T) {
	pkgs := loadPackages(t)
	for path, p := range pkgs {
		if within(path, module+"/internal/cli") || within(path, module+"/cmd") {
			continue
		}
		for imp := range closure(pkgs, p) {
			if within(imp, cobra) {
				t.Errorf("%s imports %s (%s): only internal/cli and cmd may", path, imp, via(pkgs, path, cobra))
				break
			}
		}
	}
}

// forEachUse calls fn for every selector pkg.Name in the files of every
// package outside allowedOutside, where pkg is the file's name for one of
// the standard packages in std.
func forEachUse(t *testing.T, std []string, fn func(path, stdPkg, name string)) {
	pkgs := loadPackages(t)
	for path, p := range pkgs {
		allowed := false
		for _, a := range allowedOutside {
			allowed = allowed || within(path, a)
		}
		if allowed {
			continue
		}
		for _, f := range p.files {
			names := map[string]string{} // local name -> import path
			for _, imp := range f.Imports {
				ip, _ := strconv.Unquote(imp.Path.Value)
				for _, s := range std {
					if ip != s {
						continue
					}
					name := s[strings.LastIndex(s, "/")+1:]
					if imp.Name != nil {
						name = imp.Name.Name
					}
					names[name] = s
				}
			}
			if len(names) == 0 {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok {
					if s, ok := names[id.Name]; ok {
						fn(path, s, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// TestOnlyCLIPrints keeps terminal output, logging and exits in the cli
// package and main: other packages return errors and notes.
func TestOnlyCLIPrints(t *testing.T) {
	forEachUse(t, []string{"os", "fmt", "log", "log/slog"}, func(path, std, name string) {
		switch {
		case std == "os" && (name == "Stdout" || name == "Stderr" || name == "Exit"):
		case std == "fmt" && (name == "Print" || name == "Printf" || name == "Println"):
		case std == "log":
		case std == "log/slog" && !slogType(name):
		default:
			return
		}
		t.Errorf("%s uses %s.%s: only internal/cli and cmd print, log or exit", path, std, name)
	})
}

// slogType reports whether name is one of log/slog's types or constructors
// that do not write anywhere by themselves.
func slogType(name string) bool {
	switch name {
	case "Logger", "Handler", "Attr", "Value", "Level", "Record", "HandlerOptions", "Any", "String", "Int", "Int64",
		"Bool", "Duration", "Float64", "Time", "Group", "New", "NewTextHandler", "NewJSONHandler":
		return true
	}
	return false
}

// TestOnlyCLIReadsEnvironment keeps the process environment in the CLI:
// everything below gets Main.Env passed down, so that an in-process run
// with an injected environment behaves as the binary would.
func TestOnlyCLIReadsEnvironment(t *testing.T) {
	forEachUse(t, []string{"os"}, func(path, _, name string) {
		switch name {
		case "Getenv", "LookupEnv", "Environ", "ExpandEnv":
			t.Errorf("%s uses os.%s: only internal/cli, cmd and internal/pgtest read the environment; pass Main.Env down", path, name)
		}
	})
}
