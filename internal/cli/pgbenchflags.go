package cli

// pgbench's spellings of run and init flags (PostgreSQL 17's pgbench):
// long forms pgarena spells otherwise are aliases (--client, --random-seed,
// -F), flags pgarena honours are mapped (-l and its logs, -n,
// --progress-timestamp, --failures-detailed, --verbose-errors), and flags it
// cannot honour are refused with one line naming the alternative, or
// accepted with a note where they change nothing measured.

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/session"
)

// pgbenchAliases are pgbench's long names for pgarena's flags.
var pgbenchAliases = map[string]string{
	"client":      "clients",
	"random-seed": "seed",
}

// normalizePgbench maps pgbench's long names onto pgarena's (--client=950
// is --clients=950).
func normalizePgbench(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if to, ok := pgbenchAliases[name]; ok {
		return pflag.NormalizedName(to)
	}
	return pflag.NormalizedName(name)
}

// pgbenchRunFlags are pgbench's benchmarking options that pgarena's own
// flags do not cover.
type pgbenchRunFlags struct {
	log               bool
	logPrefix         string
	aggregateInterval int // seconds, as pgbench
	samplingRate      float64
	progressTimestamp bool
	failuresDetailed  bool
	verboseErrors     bool
	noVacuum          bool
	vacuumAll         bool // refused
	initialize        bool // refused
	exitOnAbort       bool // refused
	notes             []string
}

func (p *pgbenchRunFlags) add(fl *pflag.FlagSet) {
	fl.BoolVarP(&p.log, "log", "l", false, "write pgbench's per-transaction log (pgbench_log.PID, one file per -j thread) in the current directory")
	fl.StringVar(&p.logPrefix, "log-prefix", "pgbench_log", "file name prefix of the -l logs (may hold a directory)")
	fl.IntVar(&p.aggregateInterval, "aggregate-interval", 0, "with -l: write pgbench's aggregated log, one line per this many seconds")
	fl.Float64Var(&p.samplingRate, "sampling-rate", 0, "with -l: log this fraction of the transactions (0.01 for 1%)")
	fl.BoolVar(&p.progressTimestamp, "progress-timestamp", false, "progress lines show the Unix epoch time instead of the time since the start")
	fl.BoolVar(&p.failuresDetailed, "failures-detailed", false, "report serialization and deadlock failures apart in the summary and the -l logs (pgbench's lines and columns)")
	fl.BoolVar(&p.verboseErrors, "verbose-errors", false, "print a line for each failed transaction with what the server said (at most 20 a second)")
	fl.BoolVarP(&p.noVacuum, "no-vacuum", "n", false, "accepted for pgbench's sake: pgarena never vacuums before a run")
	fl.BoolVarP(&p.vacuumAll, "vacuum-all", "v", false, "pgbench's vacuum before the run: refused (see the message)")
	fl.BoolVarP(&p.initialize, "initialize", "i", false, "pgbench's init mode: refused (use pgarena init)")
	fl.BoolVar(&p.exitOnAbort, "exit-on-abort", false, "pgbench's exit on the first client error: refused (use --autostop)")
	for _, name := range []string{"vacuum-all", "initialize", "exit-on-abort"} {
		_ = fl.MarkHidden(name)
	}
	fl.SetNormalizeFunc(normalizePgbench)
}

// validate checks the pgbench flags as pgbench does, and refuses those
// pgarena cannot honour.
func (p *pgbenchRunFlags) validate(cmd *cobra.Command) error {
	fl := cmd.Flags()
	switch {
	case p.vacuumAll:
		return usagef("-v/--vacuum-all: pgarena does not vacuum before a run; run VACUUM ANALYZE yourself first (psql -c 'VACUUM ANALYZE')")
	case p.initialize:
		return usagef("-i/--initialize: use `pgarena init %s ...` to initialise, or `pgarena run %s --init ...` to initialise and run", cmd.Name(), cmd.Name())
	case p.exitOnAbort:
		return usagef("--exit-on-abort: pgarena counts failed transactions and goes on; to stop at the first failures use --autostop 'errors>0/s for 1s'")
	case !p.log && (fl.Changed("log-prefix") || fl.Changed("aggregate-interval") || fl.Changed("sampling-rate")):
		return usagef("--log-prefix, --aggregate-interval and --sampling-rate apply to the transaction log: add -l")
	case fl.Changed("aggregate-interval") && p.aggregateInterval <= 0:
		return usagef("--aggregate-interval must be a positive number of seconds (got %d)", p.aggregateInterval)
	case fl.Changed("sampling-rate") && (p.samplingRate <= 0 || p.samplingRate > 1):
		return usagef("--sampling-rate must be above 0 and at most 1 (got %g)", p.samplingRate)
	case p.samplingRate > 0 && p.aggregateInterval > 0:
		return usagef("--sampling-rate and --aggregate-interval cannot be used together (as in pgbench)")
	case p.logPrefix == "":
		return usagef("--log-prefix must not be empty")
	}
	if dir := filepath.Dir(p.logPrefix); p.log {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usagef("--log-prefix %q: the directory %s does not exist", p.logPrefix, dir)
		}
	}
	if fl.Changed("progress-timestamp") && !fl.Changed("progress") {
		p.notes = append(p.notes, "--progress-timestamp: progress lines every 10 s (-P sets how often)")
	}
	return nil
}

// apply puts the logs and the failure lines into the run's spec and prints
// the notes. The logs have a file per -j thread as given (without -j one, as
// pgbench's default -j 1).
func (p *pgbenchRunFlags) apply(spec *session.Spec, f *runFlags, stderr io.Writer, notef func(string, ...any)) {
	for _, n := range p.notes {
		notef("%s", n)
	}
	noteSeed(notef, f.seed, f.seedFrom)
	if p.log {
		spec.TxLog = &session.TxLog{Prefix: p.logPrefix, PID: os.Getpid(), Threads: max(f.jobs, 1),
			AggregateInterval: time.Duration(p.aggregateInterval) * time.Second, SamplingRate: p.samplingRate,
			FailuresDetailed: p.failuresDetailed, Throttled: f.load.rate != "" || f.load.schedule != "",
			LatencyLimit: f.load.latencyLimit > 0, MaxTries: f.maxTries}
	}
	if p.verboseErrors {
		spec.Hooks.VerboseError = func(line string) { fmt.Fprintln(stderr, line) }
	}
}

// progress sets the progress printer's timestamps.
func (p *pgbenchRunFlags) progress(o *progressOutput) *progressOutput {
	o.epoch = p.progressTimestamp
	return o
}

// summaryExtra adds pgbench's --failures-detailed lines after the summary.
func (p *pgbenchRunFlags) summaryExtra(res session.Result, then func(io.Writer)) func(io.Writer) {
	if !p.failuresDetailed {
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

// seedValue is --seed (pgbench: --random-seed): an unsigned integer, or
// "time" (the current time in microseconds) or "rand" (a random number),
// as pgbench's --random-seed. The seed used is what the run records.
type seedValue struct {
	seed *uint64
	from *string // "time" or "rand" when the seed was drawn
}

func (s seedValue) String() string { return strconv.FormatUint(*s.seed, 10) }

func (s seedValue) Set(v string) error {
	switch v = strings.TrimSpace(v); v {
	case "time":
		*s.seed = uint64(time.Now().UnixMicro())
	case "rand":
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		*s.seed = binary.LittleEndian.Uint64(b[:])
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("use an unsigned integer, time or rand")
		}
		*s.seed = n
		*s.from = ""
		return nil
	}
	*s.from = v
	return nil
}

func (s seedValue) Type() string { return "seed" }

// seedFlag adds --seed with pgbench's --random-seed values.
func seedFlag(fl *pflag.FlagSet, seed *uint64, from *string, usage string) {
	*seed = 1
	fl.Var(seedValue{seed, from}, "seed", usage+"; pgbench's --random-seed: an integer, time or rand (the seed used is recorded)")
	fl.SetNormalizeFunc(normalizePgbench)
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
