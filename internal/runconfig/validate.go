package runconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/target"
)

// Validate checks c without connecting anywhere and returns every error
// at once (errors.Join), one line each naming the flag (key) to fix. What
// depends on the workload's kind (its groups, its operation count) and on
// the clock (--start-at) is the command line's to check.
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Workload == "" {
		add("workload: name the workload to run (%s)", names())
	} else if _, err := c.NewWorkload(); err != nil {
		errs = append(errs, err)
	}
	switch {
	case c.Time != nil && c.Transactions > 0:
		add("give either -T/--time or -t/--transactions, not both")
	case c.Time != nil && *c.Time <= 0:
		add("time must be positive (got %s)", *c.Time)
	}
	if c.Transactions < 0 {
		add("transactions must be at least 1 (got %d)", c.Transactions)
	}
	if c.MaxTries < 1 {
		add("--max-tries must be at least 1 (got %d)", c.MaxTries)
	}
	if c.DrainTimeout < 0 {
		add("--drain-timeout must not be negative (got %s; 0 cancels at once)", c.DrainTimeout)
	}
	if c.Failover < 0 {
		add("--failover AFTER must be more than 0 (got %s)", c.Failover)
	}
	if c.Jobs < 0 {
		add("jobs must be at least 1 (got %d)", c.Jobs)
	}
	if c.Interval < 10*time.Millisecond {
		add("--interval must be at least 10ms (got %s)", c.Interval)
	}
	if c.LoadWorkers < 1 {
		add("--load-workers must be at least 1 (got %d)", c.LoadWorkers)
	}
	if c.MaxErrorRate <= 0 || c.MaxErrorRate > 100 {
		add("--max-error-rate is a percentage above 0, at most 100 (got %g)", c.MaxErrorRate)
	}
	if c.PoolSize != nil && *c.PoolSize < 1 {
		add("--pool-size must be at least 1 (got %d)", *c.PoolSize)
	}
	if c.Agents != nil && *c.Agents < 1 {
		add("--agents N: N must be at least 1 (got %d)", *c.Agents)
	}
	if c.DSN != "" && c.Cluster != "" {
		add("give either --dsn or --cluster, not both")
	}
	if c.Protocol != "" {
		if _, err := target.ParseQueryMode(c.Protocol); err != nil {
			add("-M: %s", err)
		}
	}
	if _, err := netio.ParseMode(c.NetIO); err != nil {
		add("--net-io: %s", err)
	}
	for _, kv := range c.PgSet {
		if k, _, ok := strings.Cut(kv, "="); !ok || strings.TrimSpace(k) == "" {
			add("--pg-set %q: expected key=value", kv)
		}
	}
	errs = append(errs, c.validateLoad(), c.validatePgbench(), c.validateOuts())
	return errors.Join(errs...)
}

// validateLoad checks the load model and that sampled autostop rules have
// samples.
func (c *Config) validateLoad() error {
	d := Val(c.Time)
	if d == 0 && c.Transactions == 0 {
		d = 60 * time.Second
	}
	_, rules, err := c.LoadPlan(d, c.Transactions)
	if err != nil {
		return err
	}
	for _, r := range rules {
		if r.IsSampled() && c.SampleInterval <= 0 {
			return fmt.Errorf("autostop %q watches a sampled series: it needs --sample-interval above 0", r.Text)
		}
	}
	return nil
}

// validatePgbench checks pgbench's flags as pgbench does, and refuses those
// pgarena cannot honour.
func (c *Config) validatePgbench() error {
	logOnly := c.LogPrefix != "pgbench_log" || c.AggregateInterval != nil || c.SamplingRate != nil
	agg, rate := Val(c.AggregateInterval), Val(c.SamplingRate)
	switch {
	case c.VacuumAll:
		return fmt.Errorf("-v/--vacuum-all: pgarena does not vacuum before a run; run VACUUM ANALYZE yourself first (psql -c 'VACUUM ANALYZE')")
	case c.Initialize:
		return fmt.Errorf("-i/--initialize: use `pgarena init %s ...` to initialise, or `pgarena run %s --init ...` to initialise and run", c.Workload, c.Workload)
	case c.ExitOnAbort:
		return fmt.Errorf("--exit-on-abort: pgarena counts failed transactions and goes on; to stop at the first failures use --autostop 'errors>0/s for 1s'")
	case !c.Log && logOnly:
		return fmt.Errorf("--log-prefix, --aggregate-interval and --sampling-rate apply to the transaction log: add -l")
	case c.AggregateInterval != nil && agg <= 0:
		return fmt.Errorf("--aggregate-interval must be a positive number of seconds (got %d)", agg)
	case c.SamplingRate != nil && (rate <= 0 || rate > 1):
		return fmt.Errorf("--sampling-rate must be above 0 and at most 1 (got %g)", rate)
	case rate > 0 && agg > 0:
		return fmt.Errorf("--sampling-rate and --aggregate-interval cannot be used together (as in pgbench)")
	case c.LogPrefix == "":
		return fmt.Errorf("--log-prefix must not be empty")
	}
	if dir := filepath.Dir(c.LogPrefix); c.Log {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("--log-prefix %q: the directory %s does not exist", c.LogPrefix, dir)
		}
	}
	return nil
}

// validateOuts refuses unknown --out kinds and a second use of stdout.
func (c *Config) validateOuts() error {
	_, err := c.StdoutOut()
	return err
}

// StdoutOut reports whether an --out writes to stdout; its error refuses
// unknown kinds and a second use of stdout.
func (c *Config) StdoutOut() (bool, error) {
	if len(c.Out) > 0 && Val(c.Agents) > 0 {
		return false, fmt.Errorf("--out does not combine with --agents (each agent would write it): publish the merged run instead (pgarena publish)")
	}
	stdout := false
	for _, spec := range c.Out {
		k, arg, err := output.Parse(spec)
		if err != nil {
			return false, fmt.Errorf("--out %s: %v", spec, err)
		}
		if k.UsesStdout != nil && k.UsesStdout(arg) {
			if stdout || c.JSON {
				return false, fmt.Errorf("--out %s: stdout is already taken (by --json or another --out ...=-)", spec)
			}
			stdout = true
		}
	}
	return stdout, nil
}
