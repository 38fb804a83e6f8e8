package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/target/local"
	"github.com/pgarena/pgarena/internal/workload"
)

func (a *app) clusterCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Manage named local PostgreSQL clusters",
		Long: `Named local clusters persist between commands (unlike the ephemeral cluster
of "run" without --dsn). They live in $PGARENA_HOME/clusters (default
~/.local/share/pgarena/clusters). Use one with --cluster NAME.`,
		Example: `  pgarena cluster start --name dev --pg-set shared_buffers=2GB
  eval "$(pgarena cluster env dev)"
  pgarena init tpcb -s 10 --cluster dev
  pgarena cluster stop dev`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("cluster needs a subcommand: start, stop, status, env or rm")
		},
	}
	cmd.AddCommand(a.clusterStartCommand(), a.clusterStopCommand(), a.clusterStatusCommand(),
		a.clusterEnvCommand(), a.clusterRmCommand())
	return cmd
}

func (a *app) clusterStartCommand() *cobra.Command {
	var (
		name   string
		pgBin  string
		pgSet  []string
		port   int
		maxCon int
	)
	start := &cobra.Command{
		Use:     "start [--name NAME]",
		Short:   "Create (on first use) and start a named cluster",
		Example: "  pgarena cluster start --name dev --pg-set max_connections=500",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				name = args[0]
			}
			settings, err := parsePgSet(pgSet)
			if err != nil {
				return err
			}
			c, err := local.StartNamed(cmd.Context(), name, local.Options{Env: a.Env, BinDir: pgBin, Port: port,
				Settings: settings, MinConnections: maxCon, Notef: a.notef})
			if err != nil {
				return clusterErr(err)
			}
			fmt.Fprintf(a.Stdout, "cluster %s running: %s\n", name, c.DSN("postgres"))
			fmt.Fprintf(a.Stdout, "use it with --cluster %s, or eval \"$(pgarena cluster env %s)\"\n", name, name)
			return nil
		},
	}
	start.Flags().StringVar(&name, "name", "dev", "cluster name")
	start.Flags().StringVar(&pgBin, "pg-bin", "", "PostgreSQL server binaries (default: $PGARENA_PG_BIN, else the highest version found)")
	workload.StringArrayVarP(start.Flags(), &pgSet, "pg-set", "", "server setting, key=value (repeatable)")
	start.Flags().IntVar(&port, "port", 0, "TCP port on 127.0.0.1 (default: a free one)")
	start.Flags().IntVar(&maxCon, "max-connections", 100, "at least this many connections")

	return start
}

// namedCluster is a subcommand acting on an existing named cluster.
func (a *app) namedCluster(use, short string, fn func(ctx context.Context, c *local.Cluster) error) *cobra.Command {
	return &cobra.Command{
		Use:   use + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := local.OpenNamed(a.Env, args[0])
			if err != nil {
				return clusterErr(err)
			}
			return fn(cmd.Context(), c)
		},
	}
}

func (a *app) clusterStopCommand() *cobra.Command {
	return a.namedCluster("stop", "Stop a named cluster (its data is kept)", func(ctx context.Context, c *local.Cluster) error {
		if !c.Running() {
			fmt.Fprintln(a.Stdout, "not running")
			return nil
		}
		if err := c.Stop(ctx); err != nil {
			return err
		}
		fmt.Fprintln(a.Stdout, "stopped")
		return nil
	})
}

func (a *app) clusterEnvCommand() *cobra.Command {
	return a.namedCluster("env", "Print PG* variables for a named cluster (eval \"$(pgarena cluster env NAME)\")", func(ctx context.Context, c *local.Cluster) error {
		for _, kv := range c.Env() {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(a.Stdout, "export %s=%s\n", k, shellQuote(v))
		}
		return nil
	})
}

func (a *app) clusterRmCommand() *cobra.Command {
	return a.namedCluster("rm", "Stop and delete a named cluster and its data", func(ctx context.Context, c *local.Cluster) error {
		if err := c.Remove(); err != nil {
			return err
		}
		fmt.Fprintln(a.Stdout, "removed")
		return nil
	})
}

func (a *app) clusterStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show named clusters and whether they run",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := local.ListNamed(a.Env)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATUS\tPORT\tVERSION\tDIR")
			found := false
			for _, s := range list {
				if len(args) == 1 && s.Name != args[0] {
					continue
				}
				found = true
				st := "stopped"
				if s.Running {
					st = "running"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.Name, st, s.Port, s.Version, s.Dir)
			}
			tw.Flush()
			if len(args) == 1 && !found {
				return usagef("no cluster named %q (see `pgarena cluster start --name %s`)", args[0], args[0])
			}
			return nil
		},
	}
}

func clusterErr(err error) error {
	return usagef("%s", err)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
