package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/output/postgres"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/target"
)

const publishLong = `Upload recorded runs into a PostgreSQL results database (schema
pgarena_results, created or migrated on first use; see --out postgres=DSN for
writing a run as it goes). Each run is one transaction; a run already there
as recorded is left alone, so publishing twice changes nothing. Several
machines may publish to one database at once.`

func (a *app) publishCommand() *cobra.Command {
	var results, to string
	var all bool
	cmd := &cobra.Command{
		Use:     "publish RUN... | --all",
		Short:   "Upload recorded runs into a PostgreSQL results database",
		Long:    publishLong,
		Example: "  pgarena publish last --to postgres://bench@results/pgarena\n  pgarena publish --all --to \"$RESULTS_DSN\"",
		RunE: func(cmd *cobra.Command, refs []string) error {
			switch {
			case to == "":
				return usagef("publish needs --to DSN (the results database)")
			case all == (len(refs) > 0):
				return usagef("name runs to publish, or --all (not both)")
			}
			return a.publish(cmd, results, to, refs, all)
		},
	}
	f := cmd.Flags()
	f.StringVar(&results, "results", "", "results directory (default $PGARENA_RESULTS or ./pgarena-results)")
	f.StringVar(&to, "to", "", "the results database (libpq DSN or URL; PG* variables fill in the rest)")
	f.BoolVar(&all, "all", false, "publish every run of the results directory")
	return cmd
}

func (a *app) publish(cmd *cobra.Command, results, to string, refs []string, all bool) error {
	ctx := cmd.Context()
	st := store.OpenReadOnly(a.resultsDir(results))
	if all {
		infos, err := st.List()
		if err != nil {
			return err
		}
		for _, i := range infos {
			refs = append(refs, i.ID)
		}
	}
	runs := make([]*store.Run, 0, len(refs))
	for _, ref := range refs {
		r, err := st.Load(ref)
		if err != nil {
			return usagef("%v", err)
		}
		runs = append(runs, r)
	}
	cfg, err := target.ParseDSN(to, a.getenv)
	if err != nil {
		return usagef("--to: %v", err)
	}
	conn, err := target.Connect(ctx, cfg, "pgarena-publish")
	if err != nil {
		return fmt.Errorf("connect to %s: %w", target.Redacted(cfg), err)
	}
	defer conn.Close(ctx)
	if err := postgres.Migrate(ctx, conn); err != nil {
		return err
	}
	for _, r := range runs {
		wrote, err := postgres.Publish(ctx, conn, r)
		switch {
		case err != nil:
			return fmt.Errorf("publish %s: %w", r.ID, err)
		case wrote:
			fmt.Fprintf(a.Stdout, "published %s (%s, %d intervals)\n", r.ID, r.Status, len(r.Intervals))
		default:
			fmt.Fprintf(a.Stdout, "%s: already published\n", r.ID)
		}
	}
	return nil
}
