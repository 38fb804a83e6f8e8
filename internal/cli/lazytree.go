package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// topCommand is one of the root's subcommands: the name that reaches it
// and what builds it.
type topCommand struct {
	name  string
	build func() *cobra.Command
}

// buildsCommand reports whether the root's subcommand name can be reached
// by this invocation's arguments, so that rootCommand need not build the
// others: building every verb with its flags runs code spread over the
// binary, ~400 KB of it mapped and ~180 KB of heap in a one-client run.
// A command line whose first word names a subcommand builds that one
// alone; any other (flags alone, whose help lists every command; help;
// completion; an unknown word, answered with the nearest names) builds
// them all.
func (a *app) buildsCommand(tops []topCommand, name string) bool {
	if len(a.args) == 0 || !slices.ContainsFunc(tops, func(c topCommand) bool { return c.name == a.args[0] }) {
		return true
	}
	return a.args[0] == name
}

// buildsWorkload reports whether parent's subcommand for workload name can
// be reached by this invocation's arguments, so that workloadCommands need
// not build the others: every workload subcommand of every verb (run,
// init, check, drop, k8s) creates a workload and its flags, about 4 M
// instructions and 1 MB of heap per start for 35 subcommands that one
// command line never reaches.
//
// A plain "VERB WORKLOAD ..." command line is narrowed, and one of flags
// alone (--help, --version) builds no workload subcommand: it reaches the
// root only. Any other (no arguments, a flag before the workload's name,
// help, completion) builds the whole tree, so help, usage and error
// messages are unchanged.
// A different verb's subcommands are never reached, nor are other
// workloads' under the named one (cobra has no prefix matching here).
func (a *app) buildsWorkload(parent *cobra.Command, name string) bool {
	if a.rootOnly() {
		return false
	}
	words := a.args
	for i, w := range words {
		if strings.HasPrefix(w, "-") {
			words = words[:i]
			break
		}
	}
	if len(words) < 2 || words[0] == "help" || strings.HasPrefix(words[0], "__") {
		return true
	}
	path := commandPath(parent)
	for i, p := range path {
		if i < len(words) && words[i] != p {
			return false
		}
	}
	return len(words) <= len(path) || words[len(path)] == name
}

// rootOnly reports whether the arguments are flags alone (--help,
// --version): then no subcommand is reached.
func (a *app) rootOnly() bool {
	for _, w := range a.args {
		if !strings.HasPrefix(w, "-") {
			return false
		}
	}
	return len(a.args) > 0
}

// rootName is the root command's name.
const rootName = "pgarena"

// commandPath is the words that reach c from the root (k8s init: [k8s
// init]); c's ancestors may not be attached to the root yet.
func commandPath(c *cobra.Command) []string {
	path := []string{c.Name()}
	for p := c.Parent(); p != nil && p.HasParent(); p = p.Parent() {
		path = append([]string{p.Name()}, path...)
	}
	if p := c.Parent(); p != nil && !p.HasParent() && p.Name() != rootName {
		path = append([]string{p.Name()}, path...)
	}
	return path
}
