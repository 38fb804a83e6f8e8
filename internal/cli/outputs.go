package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/output"
	_ "github.com/pgarena/pgarena/internal/output/all" // every --out kind
	"github.com/pgarena/pgarena/internal/session"
)

// addOutFlag adds --out, listing the registered kinds.
func addOutFlag(fl *pflag.FlagSet, outs *[]string) {
	var kinds []string
	for _, k := range output.Kinds() {
		kinds = append(kinds, k.Usage+": "+k.Help)
	}
	fl.StringArrayVar(outs, "out", nil, "also stream the run to an output (repeatable; the results directory is always written): "+
		strings.Join(kinds, "; "))
}

// checkOuts refuses unknown kinds and a second use of stdout before
// anything runs; it reports whether an output writes to stdout.
func checkOuts(outs []string, jsonOut bool, agents int) (stdout bool, err error) {
	if len(outs) > 0 && agents > 0 {
		return false, usagef("--out does not combine with --agents (each agent would write it): publish the merged run instead (pgarena publish)")
	}
	for _, spec := range outs {
		k, arg, err := output.Parse(spec)
		if err != nil {
			return false, usagef("--out %s: %v", spec, err)
		}
		if k.UsesStdout != nil && k.UsesStdout(arg) {
			if stdout || jsonOut {
				return false, usagef("--out %s: stdout is already taken (by --json or another --out ...=-)", spec)
			}
			stdout = true
		}
	}
	return stdout, nil
}

// runOutputs makes the --out outputs; a failure closes those made and is
// bad input.
func (a *app) runOutputs(outs []string) ([]session.Output, error) {
	var made []session.Output
	for _, spec := range outs {
		o, err := output.New(spec, output.Params{Env: a.getenv, Stdout: a.Stdout, Notef: a.notef})
		if err != nil {
			for _, m := range made {
				if c, ok := m.(io.Closer); ok {
					c.Close()
				}
			}
			return nil, usagef("--out %s: %v", spec, err)
		}
		made = append(made, o)
	}
	return made, nil
}

// printOutputProblems lists, after the summary, the outputs that failed or
// fell behind (the run did not wait for them; the results directory has it all).
func printOutputProblems(w io.Writer, problems []string) {
	if len(problems) == 0 {
		return
	}
	fmt.Fprintln(w, "outputs:")
	for _, p := range problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
}
