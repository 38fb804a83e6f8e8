package runconfig

import (
	"encoding/csv"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

// Config is one run. Every field's key (json, yaml) is its flag's long
// name; zero means "not given" where the flag's default depends on the
// workload (protocol), nil where giving zero is an error to report
// (time, pool-size, agents, aggregate-interval, sampling-rate).
type Config struct {
	Workload string            `json:"workload" yaml:"workload"`
	Args     []string          `json:"args,omitempty" yaml:"args,omitempty"`     // the workload's positional arguments
	Params   map[string]string `json:"params,omitempty" yaml:"params,omitempty"` // the workload's flags given, name→value

	// target
	DSN         string        `json:"dsn,omitempty" yaml:"dsn,omitempty"`
	Cluster     string        `json:"cluster,omitempty" yaml:"cluster,omitempty"`
	WaitReady   time.Duration `json:"wait-ready,omitempty" yaml:"wait-ready,omitempty"`
	PgBin       string        `json:"pg-bin,omitempty" yaml:"pg-bin,omitempty"`
	PgSet       []string      `json:"pg-set,omitempty" yaml:"pg-set,omitempty"`
	KeepCluster bool          `json:"keep-cluster,omitempty" yaml:"keep-cluster,omitempty"`

	// pooler
	Via                string        `json:"via,omitempty" yaml:"via,omitempty"`
	PoolSize           *int          `json:"pool-size,omitempty" yaml:"pool-size,omitempty"`
	PoolerReadyTimeout time.Duration `json:"pooler-ready-timeout" yaml:"pooler-ready-timeout"`
	PoolerAdminDSN     string        `json:"pooler-admin-dsn,omitempty" yaml:"pooler-admin-dsn,omitempty"`

	// segments
	Segment       string `json:"segment,omitempty" yaml:"segment,omitempty"`
	StartAt       string `json:"start-at,omitempty" yaml:"start-at,omitempty"`
	SegmentOf     string `json:"segment-of,omitempty" yaml:"segment-of,omitempty"`
	Agents        *int   `json:"agents,omitempty" yaml:"agents,omitempty"`
	SegmentIDFile string `json:"segment-id-file,omitempty" yaml:"segment-id-file,omitempty"`

	// load model
	Clients      string        `json:"clients" yaml:"clients"`
	Rate         string        `json:"rate,omitempty" yaml:"rate,omitempty"`
	Schedule     string        `json:"schedule,omitempty" yaml:"schedule,omitempty"`
	Arrival      string        `json:"arrival" yaml:"arrival"`
	LatencyLimit time.Duration `json:"latency-limit,omitempty" yaml:"latency-limit,omitempty"`
	Ramp         time.Duration `json:"ramp,omitempty" yaml:"ramp,omitempty"`
	Warmup       time.Duration `json:"warmup,omitempty" yaml:"warmup,omitempty"`
	Autostop     []string      `json:"autostop,omitempty" yaml:"autostop,omitempty"`

	// replicas and failover
	Replica            string        `json:"replica,omitempty" yaml:"replica,omitempty"`
	ReplicaDSN         string        `json:"replica-dsn,omitempty" yaml:"replica-dsn,omitempty"`
	ReadDSN            string        `json:"read-dsn,omitempty" yaml:"read-dsn,omitempty"`
	ReplicaSyncTimeout time.Duration `json:"replica-sync-timeout" yaml:"replica-sync-timeout"`
	Failover           time.Duration `json:"failover,omitempty" yaml:"failover,omitempty"`
	FailoverCommand    string        `json:"failover-command,omitempty" yaml:"failover-command,omitempty"`
	FailoverExternal   bool          `json:"failover-external,omitempty" yaml:"failover-external,omitempty"`
	FailoverTimeout    time.Duration `json:"failover-timeout" yaml:"failover-timeout"`
	CatchUpTimeout     time.Duration `json:"catch-up-timeout" yaml:"catch-up-timeout"`

	// the run
	Jobs                 int            `json:"jobs,omitempty" yaml:"jobs,omitempty"`
	Time                 *time.Duration `json:"time,omitempty" yaml:"time,omitempty"`
	Transactions         int            `json:"transactions,omitempty" yaml:"transactions,omitempty"`
	Progress             time.Duration  `json:"progress" yaml:"progress"`
	DrainTimeout         time.Duration  `json:"drain-timeout" yaml:"drain-timeout"`
	Protocol             string         `json:"protocol,omitempty" yaml:"protocol,omitempty"`
	Connect              bool           `json:"connect,omitempty" yaml:"connect,omitempty"`
	MaxTries             int            `json:"max-tries" yaml:"max-tries"`
	Label                string         `json:"label,omitempty" yaml:"label,omitempty"`
	SessionSet           []string       `json:"session-set,omitempty" yaml:"session-set,omitempty"`
	WorkerDSN            []string       `json:"worker-dsn,omitempty" yaml:"worker-dsn,omitempty"`
	Seed                 uint64         `json:"seed" yaml:"seed"`
	JSON                 bool           `json:"json,omitempty" yaml:"json,omitempty"`
	Out                  []string       `json:"out,omitempty" yaml:"out,omitempty"`
	ReportPerCommand     bool           `json:"report-per-command,omitempty" yaml:"report-per-command,omitempty"`
	Results              string         `json:"results,omitempty" yaml:"results,omitempty"`
	Interval             time.Duration  `json:"interval" yaml:"interval"`
	Init                 bool           `json:"init,omitempty" yaml:"init,omitempty"`
	LoadWorkers          int            `json:"load-workers" yaml:"load-workers"`
	Check                bool           `json:"check,omitempty" yaml:"check,omitempty"`
	SampleInterval       time.Duration  `json:"sample-interval" yaml:"sample-interval"`
	ServerLog            string         `json:"server-log,omitempty" yaml:"server-log,omitempty"`
	DBHostLocal          bool           `json:"db-host-local,omitempty" yaml:"db-host-local,omitempty"`
	MaxErrorRate         float64        `json:"max-error-rate" yaml:"max-error-rate"` // percent
	ProceedWithConnected bool           `json:"proceed-with-connected,omitempty" yaml:"proceed-with-connected,omitempty"`
	CPUProfile           string         `json:"cpu-profile,omitempty" yaml:"cpu-profile,omitempty"`
	NetIO                string         `json:"net-io" yaml:"net-io"`
	FixedProcs           bool           `json:"fixed-procs,omitempty" yaml:"fixed-procs,omitempty"`

	// pgbench's spellings (pgbenchflags)
	Log               bool     `json:"log,omitempty" yaml:"log,omitempty"`
	LogPrefix         string   `json:"log-prefix" yaml:"log-prefix"`
	AggregateInterval *int     `json:"aggregate-interval,omitempty" yaml:"aggregate-interval,omitempty"` // seconds
	SamplingRate      *float64 `json:"sampling-rate,omitempty" yaml:"sampling-rate,omitempty"`
	ProgressTimestamp bool     `json:"progress-timestamp,omitempty" yaml:"progress-timestamp,omitempty"`
	FailuresDetailed  bool     `json:"failures-detailed,omitempty" yaml:"failures-detailed,omitempty"`
	VerboseErrors     bool     `json:"verbose-errors,omitempty" yaml:"verbose-errors,omitempty"`
	NoVacuum          bool     `json:"no-vacuum,omitempty" yaml:"no-vacuum,omitempty"`
	VacuumAll         bool     `json:"vacuum-all,omitempty" yaml:"vacuum-all,omitempty"`
	Initialize        bool     `json:"initialize,omitempty" yaml:"initialize,omitempty"`
	ExitOnAbort       bool     `json:"exit-on-abort,omitempty" yaml:"exit-on-abort,omitempty"`

	// SeedFrom is "time" or "rand" when --seed drew Seed (not recorded:
	// the seed drawn is).
	SeedFrom string `json:"-" yaml:"-"`
}

// Default is a Config with every flag's default and no workload.
func Default() Config {
	var c Config
	c.AddFlags(pflag.NewFlagSet("run", pflag.ContinueOnError))
	return c
}

// EncodeYAML is c as YAML, readable by ApplyFile (run --config).
func (c *Config) EncodeYAML() ([]byte, error) { return yaml.Marshal(c) }

// Redacted is a copy of c whose connection strings (and any other value
// holding one) have their passwords masked, as a recorded command line.
func (c *Config) Redacted() *Config {
	r := c.Clone()
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString(target.RedactDSN(f.String()))
		case reflect.Slice:
			if s, ok := f.Interface().([]string); ok {
				for k := range s {
					s[k] = target.RedactDSN(s[k])
				}
			}
		}
	}
	for k, p := range r.Params {
		r.Params[k] = target.RedactDSN(p)
	}
	return r
}

// Clone is a deep copy of c.
func (c *Config) Clone() *Config {
	r := *c
	r.Args, r.PgSet, r.Autostop = slices.Clone(c.Args), slices.Clone(c.PgSet), slices.Clone(c.Autostop)
	r.SessionSet, r.WorkerDSN, r.Out = slices.Clone(c.SessionSet), slices.Clone(c.WorkerDSN), slices.Clone(c.Out)
	if c.Params != nil {
		r.Params = make(map[string]string, len(c.Params))
		for k, v := range c.Params {
			r.Params[k] = v
		}
	}
	return &r
}

// Val is *p, or the zero value when p is nil (an optional key not given).
func Val[T any](p *T) T {
	if p == nil {
		var z T
		return z
	}
	return *p
}

// Explicit reports whether c names a target itself (--dsn or --cluster).
func (c *Config) Explicit() bool { return c.DSN != "" || c.Cluster != "" }

// NewWorkload makes c's workload with its parameters and arguments, and
// validates it. Errors are one line naming the workload's flag.
func (c *Config) NewWorkload() (workload.Workload, error) {
	m, ok := workload.Get(c.Workload)
	if !ok {
		return nil, fmt.Errorf("workload: unknown workload %q (available: %s)", c.Workload, names())
	}
	w := m.New()
	if len(c.Params) > 0 {
		fs, ok := w.(workload.Flagser)
		if !ok {
			return nil, fmt.Errorf("params: %s takes no parameters", c.Workload)
		}
		for _, k := range sortedKeys(c.Params) {
			if err := setParam(fs.Flags(), k, c.Params[k]); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Workload, err)
			}
		}
	}
	if a, ok := w.(workload.Argser); ok {
		if err := a.SetArgs(c.Args); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Workload, err)
		}
	} else if len(c.Args) > 0 {
		return nil, fmt.Errorf("args: %s takes no arguments (got %s)", c.Workload, strings.Join(c.Args, " "))
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Workload, err)
	}
	return w, nil
}

// setParam sets the workload flag name to value: a list flag's value is
// its CSV form, as Params records it.
func setParam(fs *pflag.FlagSet, name, value string) error {
	fl := fs.Lookup(name)
	if fl == nil || !workload.FlagApplies(fl, "run") {
		return fmt.Errorf("--%s: not a parameter of the workload's runs", name)
	}
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		items, err := csv.NewReader(strings.NewReader(strings.TrimSuffix(strings.TrimPrefix(value, "["), "]"))).Read()
		if err != nil && value != "[]" && value != "" {
			return fmt.Errorf("--%s %q: %v", name, value, err)
		}
		if err := sv.Replace(items); err != nil {
			return fmt.Errorf("--%s %q: %v", name, value, err)
		}
		fl.Changed = true
		return nil
	}
	if err := fs.Set(name, value); err != nil {
		return fmt.Errorf("--%s %q: %v", name, value, err)
	}
	return nil
}

// Params is the workload flags given in fs (the workload's own set), as
// name→value strings; a list flag's value is its CSV form ("[a,b]").
func Params(fs *pflag.FlagSet) map[string]string {
	var m map[string]string
	fs.VisitAll(func(fl *pflag.Flag) {
		if !fl.Changed {
			return
		}
		if m == nil {
			m = map[string]string{}
		}
		m[fl.Name] = fl.Value.String()
	})
	return m
}

func names() string {
	var n []string
	for _, m := range workload.All() {
		n = append(n, m.Name)
	}
	return strings.Join(n, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// redactedPassword matches a password Redacted masked, in a URL or a
// keyword string.
var redactedPassword = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`:xxxxx@|\bpassword=xxxxx\b`) }}

// Unmasked is c with the passwords Redacted masked left out, so that a
// recorded run connects with PGPASSWORD or ~/.pgpass; masked reports
// whether there were any.
func (c *Config) Unmasked() (r *Config, masked bool) {
	r = c.Clone()
	fix := func(s string) string {
		if !redactedPassword.Get().MatchString(s) {
			return s
		}
		masked = true
		return redactedPassword.Get().ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasPrefix(m, ":") {
				return "@"
			}
			return ""
		})
	}
	r.DSN, r.ReplicaDSN, r.ReadDSN, r.PoolerAdminDSN = fix(r.DSN), fix(r.ReplicaDSN), fix(r.ReadDSN), fix(r.PoolerAdminDSN)
	for i := range r.WorkerDSN {
		r.WorkerDSN[i] = fix(r.WorkerDSN[i])
	}
	return r, masked
}
