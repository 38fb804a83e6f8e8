package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

func (a *app) initCommand() *cobra.Command {
	var (
		t       targetFlags
		workers int
		force   bool
		seed    uint64
		seeded  string // time or rand (--random-seed)
		pgb     pgbenchInitFlags
		segment string
	)
	cmd := &cobra.Command{
		Use:   "init WORKLOAD",
		Short: "Create and load a workload's schema (like pgbench -i)",
		Long: `Create the workload's tables, load them over several connections in parallel
with binary COPY, add primary keys and indexes, then VACUUM ANALYZE. The data
is deterministic. Tables are marked as pgarena's; init refuses to replace
same-named tables that pgarena did not create unless --force.`,
		Example: `  pgarena init tpcb -s 50 --fillfactor 90 --dsn "$DSN"
  pgarena init tpcb -s 10 --cluster dev
  pgarena init tpcc --warehouses 100 --load-workers 8 --dsn "$DSN"
  pgarena init tpcc -w 100 --warehouse-range 1-50 --dsn "$DSN"    # one slice; another loader does 51-100
  pgarena init tpcc -w 100 --citus --shard-count 96 --dsn "$COORDINATOR"
  pgarena init ycsb --records 10000000 --field-count 10 --field-length 100 --dsn "$DSN"
  pgarena init ycsb --records 10000000 --insert-start 0 --insert-count 5000000 --dsn "$DSN"   # another loader: --insert-start 5000000
  pgarena init sysbench --tables 16 --table-size 100000 --dsn "$DSN"
  pgarena init tpch --scale 1 --dsn "$DSN"
  pgarena init chbench --warehouses 10 --dsn "$DSN"`,
	}
	a.workloadCommands(cmd, "init", func(sub *cobra.Command) {
		t.add(sub)
		sub.Flags().IntVar(&workers, "load-workers", runtime.NumCPU(), "connections loading data in parallel")
		sub.Flags().BoolVar(&force, "force", false, "replace same-named tables that pgarena did not create")
		runconfig.SeedVar(sub.Flags(), &seed, &seeded, "seed of the generated data (for workloads whose data is random)")
		sub.Flags().StringVar(&segment, "segment", "", "load only slice i of N of the data (i/N; /N takes i from JOB_COMPLETION_INDEX, as pgarena k8s init's pods do); the loader completing the set builds the keys")
		pgb.add(sub)
	}, func(cmd *cobra.Command, w workload.Workload) error {
		if err := pgb.validate(cmd, a.notef); err != nil {
			return err
		}
		noteSeed(a.notef, seed, seeded)
		if err := a.sliceSegment(w, segment); err != nil {
			return err
		}
		if len(w.Tables()) == 0 {
			return usagef("%s has no tables of its own to create: its scripts run on whatever the database holds", w.Meta().Name)
		}
		if workers < 1 {
			return usagef("--load-workers must be at least 1 (got %d)", workers)
		}
		if s, ok := w.(workload.Seeder); ok {
			s.SetSeed(seed)
		}
		tg, teardown, err := a.requireTarget(cmd, &t)
		if err != nil {
			return err
		}
		defer teardown()
		cfg := tg.Config
		conn, err := tg.Connect(cmd.Context(), "")
		if err != nil {
			return err
		}
		// What the workload needs of the target (tpcc --citus: the
		// extension) is bad input when missing: say so before loading.
		if p, ok := w.(workload.InitPreparer); ok {
			if err := p.PrepareInit(cmd.Context(), conn); err != nil {
				conn.Close(context.Background())
				return usagef("%s", oneLine(err.Error()))
			}
		}
		if fi, ok := w.(workload.Functioner); ok && fi.FunctionsOnly() {
			defer conn.Close(context.Background())
			return a.createFunctions(cmd.Context(), conn, w)
		}
		conn.Close(context.Background())
		return a.load(cmd.Context(), cfg, w, workers, force)
	})
	return cmd
}

// sliceSegment selects init --segment i/N's slice of w's data ("" for all).
func (a *app) sliceSegment(w workload.Workload, segment string) error {
	if segment == "" {
		return nil
	}
	sl, ok := w.(workload.Slicer)
	if !ok {
		return usagef("--segment: %s cannot be loaded in slices (tpcc, ycsb, sysbench and tpch can)", w.Meta().Name)
	}
	seg, err := driver.ParseSegment(segment, a.getenv("JOB_COMPLETION_INDEX"))
	if err != nil {
		return usagef("%s", err)
	}
	if err := sl.SliceOf(seg.Index, seg.Count); err != nil {
		return usagef("--segment %s: %s", segment, err)
	}
	return nil
}

// createFunctions creates w's functions on a database it is loaded in,
// leaving the data alone (tpcc --functions-only).
func (a *app) createFunctions(ctx context.Context, conn *pgx.Conn, w workload.Workload) error {
	if err := session.RequireInitialised(ctx, conn, w); err != nil {
		return err
	}
	created, kept, err := loader.CreateFunctions(ctx, conn, w)
	if err != nil {
		return fmt.Errorf("init %s: %w", w.Meta().Name, err)
	}
	fmt.Fprintf(a.Stderr, "created %d functions and procedures, tables and data untouched: %s\n", len(created), strings.Join(created, ", "))
	if len(kept) > 0 {
		a.notef("left alone (not created by pgarena): %s", strings.Join(kept, ", "))
	}
	return nil
}

// requireTarget reaches an explicit target; init, check and drop make no
// sense on an ephemeral cluster.
func (a *app) requireTarget(cmd *cobra.Command, t *targetFlags) (*target.Target, func(), error) {
	if !a.explicitTarget(t) {
		return nil, nil, usagef("%s needs a target: --dsn, --cluster NAME or PGHOST/PGDATABASE (an ephemeral cluster would be gone right after)",
			cmd.Parent().Name())
	}
	return a.provision(cmd.Context(), t)
}

// openTarget connects to the explicit target of check and drop.
func (a *app) openTarget(cmd *cobra.Command, t *targetFlags) (*pgx.Conn, error) {
	tg, teardown, err := a.requireTarget(cmd, t)
	if err != nil {
		return nil, err
	}
	defer teardown()
	return tg.Connect(cmd.Context(), "")
}

// load initialises w on cfg with a progress bar.
func (a *app) load(ctx context.Context, cfg *pgx.ConnConfig, w workload.Workload, workers int, force bool) error {
	name := w.Meta().Name
	dial := func(ctx context.Context) (*pgx.Conn, error) {
		return target.Connect(ctx, cfg, "pgarena-loader")
	}
	if !force {
		// Refuse foreign tables before any progress is printed, so that
		// bad input is one line (loader.Init checks again, atomically).
		conn, err := dial(ctx)
		if err != nil {
			return fmt.Errorf("init %s: %w", name, err)
		}
		foreign, err := loader.Foreign(ctx, conn, w)
		conn.Close(context.Background())
		if err != nil {
			return fmt.Errorf("init %s: %w", name, err)
		}
		if foreign != nil {
			return fmt.Errorf("init %s: %w", name, foreign)
		}
	}
	bar := newLoadProgress(a.Stderr, isTerminal(a.Stderr))
	stats, err := loader.Init(ctx, dial, w, loader.Options{Workers: workers, Force: force, Progress: bar})
	bar.finish()
	if err != nil {
		return fmt.Errorf("init %s: %w", name, err)
	}
	fmt.Fprintf(a.Stderr, "init %s done: %d rows in %.2f s (create %.2f s, load %.2f s, keys %.2f s, vacuum %.2f s)\n",
		name, stats.Rows, stats.Total.Seconds(), stats.Create.Seconds(), stats.Load.Seconds(),
		stats.PostLoad.Seconds(), stats.Vacuum.Seconds())
	if stats.MaintenanceWorkMem != "" {
		fmt.Fprintf(a.Stderr, "keys and indexes built with maintenance_work_mem = %s\n", stats.MaintenanceWorkMem)
	}
	if f, ok := w.(workload.Functioner); ok && (stats.Slice == nil || stats.Slice.KeysBuilt) {
		// made with the keys, whether the runs will use them or not
		var names []string
		seen := map[string]bool{}
		for _, fn := range f.Functions() {
			name, _, _ := strings.Cut(fn.Signature, "(")
			if !seen[name] {
				names = append(names, name)
			}
			seen[name] = true
		}
		fmt.Fprintf(a.Stderr, "created functions and procedures: %s\n", strings.Join(names, ", "))
	}
	if stats.Slice != nil {
		if stats.Slice.KeysBuilt {
			fmt.Fprintf(a.Stderr, "this slice completed the data set: keys and indexes built; %s is ready to run\n", name)
		} else {
			fmt.Fprintf(a.Stderr, "slice recorded; the loader of the slice that completes the data set builds the keys and indexes (until then %s is not ready to run)\n", name)
		}
	}
	a.printCitus(ctx, dial, w)
	return nil
}

// printCitus says, on a Citus coordinator, what init distributed where
// (a warning with 0 workers or placement skew).
func (a *app) printCitus(ctx context.Context, dial func(context.Context) (*pgx.Conn, error), w workload.Workload) {
	conn, err := dial(ctx)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	var names []string
	for _, t := range w.Tables() {
		names = append(names, t.Name)
	}
	c, err := session.DescribeCitus(ctx, conn, names)
	if err != nil {
		fmt.Fprintf(a.Stderr, "citus: topology not read: %s\n", oneLine(err.Error()))
	}
	if c == nil {
		return
	}
	for _, l := range c.Lines() {
		fmt.Fprintln(a.Stderr, l)
	}
}

func (a *app) checkCommand() *cobra.Command {
	var t targetFlags
	cmd := &cobra.Command{
		Use:   "check WORKLOAD",
		Short: "Run a workload's consistency checks",
		Long: `Verify the workload's invariants on the database, e.g. for tpcb that
sum(abalance) = sum(tbalance) = sum(bbalance) = sum(history.delta).
Exit code 1 when a check fails.`,
		Example: `  pgarena check tpcb --dsn "$DSN"
  pgarena check tpcc --dsn "$DSN"
  pgarena check ycsb --dsn "$DSN"
  pgarena check sysbench --dsn "$DSN"    # also tables sysbench prepared
  pgarena check tpch --answers --dsn "$DSN"   # the 22 validation queries against the answer set
  pgarena check chbench --dsn "$DSN"`,
	}
	a.workloadCommands(cmd, "check", func(sub *cobra.Command) { t.add(sub) },
		func(cmd *cobra.Command, w workload.Workload) error {
			conn, err := a.openTarget(cmd, &t)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			if err := session.RequireInitialised(cmd.Context(), conn, w); err != nil {
				return err
			}
			return a.runCheck(cmd.Context(), conn, w)
		})
	return cmd
}

func (a *app) runCheck(ctx context.Context, conn *pgx.Conn, w workload.Workload) error {
	return a.printCheck(a.Stdout, session.Check(ctx, conn, w))
}

// printCheck prints a check's outcome to w; a failed check is exit code 1.
func (a *app) printCheck(w io.Writer, c session.CheckResult) error {
	switch {
	case c.Skipped:
		fmt.Fprintf(a.Stderr, "%s has no consistency checks\n", c.Workload)
	case errors.As(c.Err, new(*workload.InputError)):
		return c.Err // bad input: exit 2
	case c.Err != nil:
		return &exitError{code: ExitFailed, msg: fmt.Sprintf("check %s failed: %s", c.Workload, oneLine(c.Err.Error()))}
	case c.Note != "":
		fmt.Fprintf(w, "check %s: ok (%.2f s); note: %s\n", c.Workload, c.Took.Seconds(), c.Note)
	default:
		fmt.Fprintf(w, "check %s: ok (%.2f s)\n", c.Workload, c.Took.Seconds())
	}
	return nil
}

func (a *app) dropCommand() *cobra.Command {
	var t targetFlags
	cmd := &cobra.Command{
		Use:   "drop WORKLOAD",
		Short: "Drop the workload's tables that pgarena created",
		Long: `Drop the workload's tables, but only those marked as created by pgarena;
same-named tables created otherwise are left alone and listed.`,
		Example: `  pgarena drop tpcb --dsn "$DSN"
  pgarena drop tpcc --dsn "$DSN"
  pgarena drop ycsb --dsn "$DSN"
  pgarena drop sysbench --dsn "$DSN"
  pgarena drop tpch --dsn "$DSN"
  pgarena drop chbench --dsn "$DSN"`,
	}
	a.workloadCommands(cmd, "drop", func(sub *cobra.Command) { t.add(sub) },
		func(cmd *cobra.Command, w workload.Workload) error {
			conn, err := a.openTarget(cmd, &t)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			foreign, err := loader.Foreign(cmd.Context(), conn, w)
			if err != nil {
				return err
			}
			dropped, err := loader.Drop(cmd.Context(), conn, w)
			if err != nil {
				return err
			}
			if len(dropped) == 0 {
				fmt.Fprintf(a.Stdout, "nothing to drop: no %s tables created by pgarena\n", w.Meta().Name)
			} else {
				fmt.Fprintf(a.Stdout, "dropped %s\n", strings.Join(dropped, ", "))
			}
			if foreign != nil {
				a.notef("left alone (not created by pgarena for %s): %s", w.Meta().Name, foreign.List())
			}
			return nil
		})
	return cmd
}
