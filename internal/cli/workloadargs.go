package cli

import (
	"strings"

	"github.com/pgarena/pgarena/internal/workload"
)

// workloadUse is the usage line of a workload's subcommand and its long
// help: its name and description and, for a workload.Argser, its
// positional arguments.
func workloadUse(meta workload.Meta, w workload.Workload) (use, long string) {
	a, ok := w.(workload.Argser)
	if !ok {
		return meta.Name, ""
	}
	usage, help := a.ArgsUsage()
	return meta.Name + " " + usage, meta.Description + "\n\n" + help
}

// setWorkloadArgs hands a subcommand's positional arguments to the
// workload; a workload that takes none refuses them (bad input, exit 2).
func setWorkloadArgs(name string, w workload.Workload, args []string) error {
	a, ok := w.(workload.Argser)
	if !ok {
		if len(args) > 0 {
			return usagef("%s takes no arguments (got %s)", name, strings.Join(args, " "))
		}
		return nil
	}
	if err := a.SetArgs(args); err != nil {
		return usagef("%s: %s", name, err)
	}
	return nil
}
