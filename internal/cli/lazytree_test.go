package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/workload"
)

// A narrowed command tree (only the workload subcommand the arguments
// name) answers exactly as the whole tree does: help, usage errors, bad
// flags, unknown workloads.
func TestNarrowTreeAnswersAsWholeTree(t *testing.T) {
	t.Parallel()
	invoke := func(args []string, whole bool) (int, string, string) {
		var out, errb bytes.Buffer
		a := &app{Main: Main{Stdout: &out, Stderr: &errb, Env: cleanEnv()}, args: args}
		if whole {
			a.args = nil // builds every subcommand
		}
		root := a.rootCommand()
		a.args = args
		root.SetArgs(args)
		root.SetOut(&out)
		root.SetErr(&errb)
		code := a.exitCode
		if err := root.ExecuteContext(context.Background()); err != nil {
			code = a.report(err)
		}
		return code, out.String(), errb.String()
	}
	for _, args := range [][]string{
		{"run", "tpcb", "--help"}, {"init", "ycsb", "--help"}, {"k8s", "tpcc", "--help"}, {"drop", "sysbench", "-h"},
		{"run", "nosuch", "-c", "1"}, {"run", "tpcb", "--no-such-flag"}, {"check", "tpcb", "-t", "x"},
		{"run", "tpcb", "-c", "0", "-t", "1"}, {"rnu", "tpcb"}, {"run", "--help"}, {"help", "run", "tpcb"},
		{"--help"}, {"-h"}, {"--version"}, {"--no-such-flag"},
		{"version"}, {"version", "x"}, {"list", "--help"}, {"cluster", "--help"}, {"k8s", "--help"}, {"find-max", "-h"},
	} {
		wc, wout, werr := invoke(args, true)
		nc, nout, nerr := invoke(args, false)
		if wc != nc || wout != nout || werr != nerr {
			t.Errorf("%v: whole tree: exit %d\n%s%s\nnarrowed: exit %d\n%s%s", args, wc, wout, werr, nc, nout, nerr)
		}
	}
	if (&app{args: []string{"run", "tpcb", "-c", "1"}}).buildsWorkload(mustFind(t, "init"), "tpcb") {
		t.Error("run tpcb builds init's tpcb subcommand")
	}
}

// A command line that names a workload builds that workload's subcommand
// and no other, whatever the depth of the other verbs (k8s init is built
// before k8s joins the root).
func TestNarrowTreeBuildsOneWorkload(t *testing.T) {
	t.Parallel()
	workloads := map[string]bool{}
	for _, m := range workload.All() {
		workloads[m.Name] = true
	}
	for _, args := range [][]string{{"run", "tpcb", "-c", "1"}, {"k8s", "init", "tpcc", "--agents", "2"}} {
		var built []string
		var walk func(c *cobra.Command)
		walk = func(c *cobra.Command) {
			for _, sub := range c.Commands() {
				if workloads[sub.Name()] {
					built = append(built, sub.CommandPath())
				}
				walk(sub)
			}
		}
		walk((&app{args: args}).rootCommand())
		if len(built) != 1 {
			t.Errorf("%v builds %d workload subcommands, want 1: %v", args, len(built), built)
		}
	}
}

func mustFind(t *testing.T, verb string) *cobra.Command {
	t.Helper()
	for _, c := range (&app{}).rootCommand().Commands() {
		if c.Name() == verb {
			return c
		}
	}
	t.Fatalf("no command %s", verb)
	return nil
}

// A command line that names a verb builds that verb alone, under the name
// topCommands gives it.
func TestNarrowTreeBuildsOneVerb(t *testing.T) {
	t.Parallel()
	for _, top := range (&app{}).topCommands() {
		cmds := (&app{args: []string{top.name, "--help"}}).rootCommand().Commands()
		if len(cmds) != 1 || cmds[0].Name() != top.name {
			names := []string{}
			for _, c := range cmds {
				names = append(names, c.Name())
			}
			t.Errorf("%s --help builds %v, want [%s]", top.name, names, top.name)
		}
	}
}
