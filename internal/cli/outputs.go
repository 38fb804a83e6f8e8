package cli

import (
	"fmt"
	"io"

	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/session"
)

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
