package archtest

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	module     = "github.com/pgarena/pgarena"
	designPath = "docs/DESIGN.md"
	cobra      = "github.com/spf13/cobra"
)

// pending are packages the design names that may not exist yet on every
// branch: a rule about one is skipped with a log line while it is missing.
var pending = map[string]bool{
	module + "/internal/session": true,
}

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

// via returns the chain of imports from p to an import within bad, for
// the error message ("a -> b -> c").
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
			if within(imp, bad) {
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

// rule is one row of the design's import rules table.
type rule struct {
	from      string   // import path; applies to it and the packages under it
	forbidden []string // import paths; each covers the packages under it
	line      int      // in DESIGN.md
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// importPath turns a table entry into an import path: "internal/..." and
// "cmd/..." are this module's, anything else is taken as it is.
func importPath(s string) string {
	if within(s, "internal") || within(s, "cmd") {
		return module + "/" + s
	}
	return s
}

// parseRules reads the first table under the heading "Import rules": a
// header with the columns "package" and "must not import", then one row
// per package, entries in code spans.
func parseRules(design string) ([]rule, error) {
	sc := bufio.NewScanner(strings.NewReader(design))
	var rules []rule
	inSection, inTable := false, false
	pkgCol, forbidCol := -1, -1
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			if inTable {
				break
			}
			inSection = strings.EqualFold(strings.TrimSpace(strings.TrimLeft(line, "#")), "import rules")
			continue
		}
		if !inSection {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break // the table ended
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if !inTable {
			for i, c := range cells {
				switch strings.ToLower(c) {
				case "package":
					pkgCol = i
				case "must not import":
					forbidCol = i
				}
			}
			if pkgCol < 0 || forbidCol < 0 {
				return nil, fmt.Errorf("%s:%d: the import rules table needs the columns `package` and `must not import`", designPath, n)
			}
			inTable = true
			continue
		}
		if strings.Trim(line, "|-: ") == "" {
			continue // the separator row
		}
		if pkgCol >= len(cells) || forbidCol >= len(cells) {
			return nil, fmt.Errorf("%s:%d: row has %d cells", designPath, n, len(cells))
		}
		from := codeSpan.FindAllStringSubmatch(cells[pkgCol], -1)
		if len(from) != 1 {
			return nil, fmt.Errorf("%s:%d: the package cell must hold one `path`", designPath, n)
		}
		r := rule{from: importPath(from[0][1]), line: n}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[forbidCol], -1) {
			r.forbidden = append(r.forbidden, importPath(m[1]))
		}
		if len(r.forbidden) == 0 {
			return nil, fmt.Errorf("%s:%d: no `path` in the must-not-import cell", designPath, n)
		}
		rules = append(rules, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%s has no import rules table (a table under the heading \"Import rules\")", designPath)
	}
	return rules, nil
}

// checkRules reports every import that breaks a rule, with the chain of
// imports that leads to it.
func checkRules(pkgs map[string]*pkg, rules []rule) (violations []string) {
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
			reach := closure(pkgs, pkgs[path])
			for _, bad := range r.forbidden {
				for imp := range reach {
					if within(imp, bad) {
						violations = append(violations, fmt.Sprintf("%s imports %s (%s; forbidden by %s:%d)",
							path, bad, via(pkgs, path, bad), designPath, r.line))
						break
					}
				}
			}
		}
	}
	sort.Strings(violations)
	return violations
}

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

func TestImportRules(t *testing.T) {
	pkgs := loadPackages(t)
	design, err := os.ReadFile(filepath.Join(repoRoot(t), designPath))
	if err != nil {
		t.Fatalf("the import rules live in %s: %v", designPath, err)
	}
	rules, err := parseRules(string(design))
	if err != nil {
		t.Fatal(err)
	}
	required := readRequired(t)
	var live []rule
	for _, r := range rules {
		if !exists(pkgs, r.from) {
			if pending[r.from] {
				t.Logf("%s:%d: skipping the rule for %s: package not there yet (pending)", designPath, r.line, r.from)
				continue
			}
			t.Errorf("%s:%d: rule for %s, which does not exist", designPath, r.line, r.from)
			continue
		}
		for _, bad := range r.forbidden {
			switch {
			case within(bad, module):
				if !exists(pkgs, bad) && !pending[bad] {
					t.Errorf("%s:%d: rule forbids %s, which does not exist", designPath, r.line, bad)
				}
			default:
				known := false
				for m := range required {
					if within(bad, m) {
						known = true
					}
				}
				if !known {
					t.Errorf("%s:%d: rule forbids %s, which no module in go.mod provides", designPath, r.line, bad)
				}
			}
		}
		live = append(live, r)
	}
	for _, v := range checkRules(pkgs, live) {
		t.Error(v)
	}
}

// TestRulesCatchIndirectImports shows the check is transitive: a workload
// reaching metrics through pgerr, and a sampler reaching pgx behind a
// module package, are caught.
func TestRulesCatchIndirectImports(t *testing.T) {
	in := func(s string) string { return module + "/internal/" + s }
	mk := func(path string, imports ...string) *pkg {
		p := &pkg{path: path, imports: map[string]bool{}}
		for _, i := range imports {
			p.imports[i] = true
		}
		return p
	}
	pkgs := map[string]*pkg{}
	for _, p := range []*pkg{
		mk(in("workload/tpcx"), in("workload"), in("pgerr")),
		mk(in("workload")),
		mk(in("pgerr"), in("metrics")),
		mk(in("metrics")),
		mk(in("store"), in("pgerr")),
	} {
		pkgs[p.path] = p
	}
	pkgs[in("pgerr")].imports["github.com/jackc/pgx/v5/pgconn"] = true
	rules, err := parseRules("## Import rules\n| package | must not import |\n|---|---|\n" +
		"| `internal/workload` | `internal/metrics` |\n| `internal/store` | `github.com/jackc/pgx/v5` |\n")
	if err != nil {
		t.Fatal(err)
	}
	got := checkRules(pkgs, rules)
	want := []string{
		in("store") + " imports github.com/jackc/pgx/v5 (internal/store -> internal/pgerr -> github.com/jackc/pgx/v5/pgconn",
		in("workload/tpcx") + " imports " + in("metrics") + " (internal/workload/tpcx -> internal/pgerr -> internal/metrics",
	}
	if len(got) != len(want) {
		t.Fatalf("violations = %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	if _, err := parseRules("# pgarena\nno table here\n"); err == nil {
		t.Error("a design without the table parsed")
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
