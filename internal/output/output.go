// Package output is the registry of the outputs a run can stream to besides
// its results directory (which is always written): `--out NAME[=ARG]`, as
// k6's outputs. Each kind is a package (internal/output/NAME) whose Kind
// internal/output/all registers.
//
// An output is a session.Output: it runs on its own goroutine behind its own
// queue, so a slow or failing output never holds up the run's clock; what
// went wrong is reported at the end (session.Result.OutputProblems). An
// output that holds a file, a listener or a connection is an io.Closer,
// closed once after its last record. An output that reads a record only
// within Write is a session.Borrower, so the run can reuse the interval's
// histograms once every output has written it.
package output

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/pgarena/pgarena/internal/session"
)

// Params is what an output is made from.
type Params struct {
	// Arg is what follows NAME= ("" without it).
	Arg string
	// Env reads the environment (Main.Env).
	Env func(string) string
	// Stdout is where an output given "-" writes.
	Stdout io.Writer
	// Notef receives notes for the user (where metrics are served).
	Notef func(format string, args ...any)
}

// Kind is one kind of output.
type Kind struct {
	Name string
	// Usage is how it is written on the command line: "jsonl=FILE|-".
	Usage string
	// Help is one line for --help.
	Help string
	// ArgRequired refuses NAME without =ARG.
	ArgRequired bool
	// New makes the output; its error is bad input (one line).
	New func(Params) (session.Output, error)
	// UsesStdout reports whether an output made from arg writes to stdout.
	UsesStdout func(arg string) bool
}

// kinds is made by the first Register, not at program start.
var (
	mu    sync.Mutex
	kinds map[string]Kind
)

// Register adds a kind; a second kind of the same name panics.
func Register(k Kind) {
	mu.Lock()
	defer mu.Unlock()
	if kinds == nil {
		kinds = map[string]Kind{}
	}
	if _, dup := kinds[k.Name]; dup {
		panic("output: " + k.Name + " registered twice")
	}
	kinds[k.Name] = k
}

// Kinds returns every registered kind, by name.
func Kinds() []Kind {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Kind) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Parse splits NAME[=ARG] and finds the kind; the error names what to fix.
func Parse(spec string) (Kind, string, error) {
	name, arg, hasArg := strings.Cut(spec, "=")
	mu.Lock()
	k, ok := kinds[name]
	mu.Unlock()
	if !ok {
		var names []string
		for _, k := range Kinds() {
			names = append(names, k.Usage)
		}
		return Kind{}, "", fmt.Errorf("unknown output %q (known: %s)", name, strings.Join(names, ", "))
	}
	if k.ArgRequired && (!hasArg || arg == "") {
		return Kind{}, "", fmt.Errorf("output %s needs an argument: --out %s", name, k.Usage)
	}
	return k, arg, nil
}

// New makes the output spec names (NAME[=ARG]).
func New(spec string, p Params) (session.Output, error) {
	k, arg, err := Parse(spec)
	if err != nil {
		return nil, err
	}
	p.Arg = arg
	if p.Notef == nil {
		p.Notef = func(string, ...any) {}
	}
	if p.Env == nil {
		p.Env = func(string) string { return "" }
	}
	o, err := k.New(p)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", k.Name, err)
	}
	return o, nil
}
