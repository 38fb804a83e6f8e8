package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// initAllowed are the module's packages that may still have init work,
// each with its reason.
var initAllowed = map[string]string{
	"github.com/pgarena/pgarena/internal/gostack":    "grows the main goroutine's stack before other packages' inits deepen it: maps less than it costs",
	"github.com/pgarena/pgarena/internal/startprocs": "gives the process one P before other packages' inits allocate: a second P's cache given up later costs ~350 KB",
}

// TestNoInitFunctions keeps pgarena's own packages free of work at program
// start: an init function runs in every command, and on a kernel that maps
// a 64 KB window of the binary around each page fault it maps its
// package's code although the command never uses it. Package-level values
// that need code to build (map literals, regexp.MustCompile, a
// package-level sync.OnceValue, which allocates) are a lazy.Value, built
// on first use (its func literal is pkg.init.funcN, code that runs only
// when called, not init work); registries are filled by the CLI from
// explicit lists (internal/workload/all, internal/output/all). The
// compiler decides what is static, so the built binary's symbols are
// checked, not the source.
func TestNoInitFunctions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "pgarena")
	build := exec.Command("go", "build", "-o", bin, "./cmd/pgarena")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	// pkg.init, pkg.init.0 (an init function), pkg.map.init.0 (a map
	// literal); not pkg.init.func1, a func literal such as a lazy.Value's New
	initSym := regexp.MustCompile(`^(github\.com/pgarena/pgarena/\S+|main)\.(?:map\.)?init(?:\.\d+)?$`)
	var found []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[1] != "T" {
			continue
		}
		m := initSym.FindStringSubmatch(f[2])
		if m == nil || initAllowed[m[1]] != "" {
			continue
		}
		found = append(found, f[2])
	}
	slices.Sort(found)
	if len(found) > 0 {
		t.Errorf("init work at program start (build these values on first use):\n%s", strings.Join(found, "\n"))
	}
	// A template's Execute reaches reflect's MethodByName (evalField):
	// the linker then keeps every exported method of every type put in an
	// interface (3 MB of binary). Pages are written with report/htmlw;
	// cobra's Set{Usage,Help,Version}Template execute templates too.
	if strings.Contains(string(out), "text/template.(*state).evalField") {
		t.Error("the binary executes a text/template or html/template (evalField is linked)")
	}
}
