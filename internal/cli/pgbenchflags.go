package cli

// pgbench's spellings of run and init flags (PostgreSQL 17's pgbench):
// long forms pgarena spells otherwise are aliases (--client, --random-seed,
// -F), flags pgarena honours are mapped (-l and its logs, -n,
// --progress-timestamp, --failures-detailed, --verbose-errors), and flags it
// cannot honour are refused with one line naming the alternative, or
// accepted with a note where they change nothing measured.

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/session"
)

// applyPgbench prints the notes and puts the failure lines into the run's
// spec (internal/runconfig put the logs there).
func applyPgbench(spec *session.Spec, f *runFlags, stderr io.Writer, notef func(string, ...any)) {
	for _, n := range f.run.Notes {
		notef("%s", n)
	}
	noteSeed(notef, f.Seed, f.SeedFrom)
	if f.VerboseErrors {
		spec.Hooks.VerboseError = func(line string) { fmt.Fprintln(stderr, line) }
	}
}

// progress sets the progress printer's timestamps.
func progressFor(f *runFlags, o *progressOutput) *progressOutput {
	o.epoch = f.ProgressTimestamp
	return o
}

// summaryExtra adds pgbench's --failures-detailed lines after the summary.
func summaryExtra(f *runFlags, res session.Result, then func(io.Writer)) func(io.Writer) {
	if !f.FailuresDetailed {
		return then
	}
	return func(w io.Writer) {
		s := &res.Summary
		processed := s.Transactions + s.Failed
		for _, c := range []pgerr.ErrorClass{pgerr.ClassSerialization, pgerr.ClassDeadlock} {
			n := s.Errors[c]
			share := 0.0
			if processed > 0 {
				share = 100 * float64(n) / float64(processed)
			}
			fmt.Fprintf(w, "number of %s failures: %d (%.3f%%)\n", c, n, share)
		}
		if then != nil {
			then(w)
		}
	}
}

// epochHead rewrites a progress line's "progress: 12.0 s" head as pgbench
// --progress-timestamp does: "progress: 1700000012.000 s".
func epochHead(line string, at time.Time) string {
	_, rest, ok := strings.Cut(line, ", ")
	if !ok {
		return line
	}
	return fmt.Sprintf("progress: %.3f s, %s", float64(at.UnixMilli())/1000, rest)
}

// noteSeed says which seed time or rand drew.
func noteSeed(notef func(string, ...any), seed uint64, from string) {
	if from != "" {
		notef("random seed %s: %d (recorded with the run)", from, seed)
	}
}

// pgbenchInitFlags are pgbench's initialization options (pgbench -i) for
// tpcb, pgbench's schema.
type pgbenchInitFlags struct {
	initSteps       string
	partitionMethod string
	foreignKeys     bool
	noVacuum        bool
	quiet           bool
	initialize      bool
	tablespace      string
	indexTablespace string
}

func (p *pgbenchInitFlags) add(sub *cobra.Command) {
	if sub.Name() != "tpcb" {
		return
	}
	fl := sub.Flags()
	if ff := fl.Lookup("fillfactor"); ff != nil && fl.ShorthandLookup("F") == nil {
		fl.VarP(aliasValue{ff}, "pgbench-fillfactor", "F", "pgbench's -F: --fillfactor")
		_ = fl.MarkHidden("pgbench-fillfactor")
	}
	fl.StringVarP(&p.initSteps, "init-steps", "I", "", "pgbench's init steps (dtgGvpf): pgarena always creates, loads, keys and vacuums; other choices are refused")
	fl.StringVar(&p.partitionMethod, "partition-method", "range", "partition method of --partitions: range (pgarena's only method)")
	fl.BoolVar(&p.foreignKeys, "foreign-keys", false, "pgbench's foreign keys: refused (see the message)")
	fl.BoolVarP(&p.noVacuum, "no-vacuum", "n", false, "accepted for pgbench's sake: pgarena init always ends with VACUUM ANALYZE")
	fl.BoolVarP(&p.quiet, "quiet", "q", false, "accepted for pgbench's sake (init progress is brief already)")
	fl.BoolVarP(&p.initialize, "initialize", "i", false, "accepted for pgbench's sake (init initialises)")
	fl.StringVar(&p.tablespace, "tablespace", "", "pgbench's tablespace: refused (see the message)")
	fl.StringVar(&p.indexTablespace, "index-tablespace", "", "pgbench's index tablespace: refused (see the message)")
	for _, name := range []string{"foreign-keys", "tablespace", "index-tablespace", "initialize", "quiet"} {
		_ = fl.MarkHidden(name)
	}
}

// validate refuses what pgarena init cannot do and notes what it does
// differently.
func (p *pgbenchInitFlags) validate(cmd *cobra.Command, notef func(string, ...any)) error {
	fl := cmd.Flags()
	if fl.Lookup("init-steps") == nil {
		return nil // not tpcb
	}
	switch {
	case p.foreignKeys || strings.Contains(p.initSteps, "f"):
		return usagef("--foreign-keys (-I f): pgarena init does not create foreign keys; add them after init with ALTER TABLE ... ADD FOREIGN KEY")
	case p.tablespace != "" || p.indexTablespace != "":
		return usagef("--tablespace/--index-tablespace: pgarena init uses the default tablespace; set it for the connection instead: --dsn \"... options='-c default_tablespace=NAME'\"")
	case p.partitionMethod != "range":
		return usagef("--partition-method %q: pgarena partitions pgbench_accounts by range only (leave out --partition-method)", p.partitionMethod)
	case fl.Changed("partition-method") && !fl.Changed("partitions"):
		return usagef("--partition-method needs --partitions above 0")
	}
	if steps := p.initSteps; steps != "" {
		if i := strings.IndexFunc(steps, func(r rune) bool { return !strings.ContainsRune("dtgGvpf ", r) }); i >= 0 {
			return usagef("-I %q: unknown init step %q (pgbench's steps are d, t, g, G, v, p, f)", steps, steps[i])
		}
		if !strings.Contains(steps, "t") || !strings.ContainsAny(steps, "gG") || !strings.Contains(steps, "p") {
			return usagef("-I %q: pgarena init always creates the tables (t), loads them (g) and adds keys (p); leave out -I", steps)
		}
		if strings.Contains(steps, "G") {
			notef("-I G: pgarena generates the data client-side and loads it with binary COPY")
		}
		if !strings.Contains(steps, "v") {
			notef("-I without v: pgarena init always ends with VACUUM ANALYZE")
		}
	}
	if p.noVacuum {
		notef("-n: pgarena init always ends with VACUUM ANALYZE")
	}
	return nil
}

// aliasValue is a second flag for the same setting (pgbench's -F for
// --fillfactor): setting it sets the first flag, marked as given.
type aliasValue struct{ to *pflag.Flag }

func (a aliasValue) String() string { return a.to.Value.String() }
func (a aliasValue) Type() string   { return a.to.Value.Type() }
func (a aliasValue) Set(v string) error {
	if err := a.to.Value.Set(v); err != nil {
		return err
	}
	a.to.Changed = true
	return nil
}
