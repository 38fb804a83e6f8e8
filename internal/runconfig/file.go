package runconfig

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/pgarena/pgarena/internal/workload"
)

// ApplyFile sets c from a YAML (or JSON) document whose keys are run flags'
// long names, "workload", "args", "params" (the workload's parameters), or
// a parameter of the workload by its name. Keys for which given reports
// true (the command line gave them) are left as they are. Every bad key is
// reported, one line each.
func (c *Config) ApplyFile(data []byte, given func(key string) bool) error {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("not a YAML mapping of run flags: %s", oneLine(err.Error()))
	}
	if given == nil {
		given = func(string) bool { return false }
	}
	fl := c.bind()
	var errs []error
	pending := map[string]string{}
	for _, key := range sortedAny(doc) {
		v := doc[key]
		switch {
		case key == "workload":
			if c.Workload == "" || !given("workload") {
				c.Workload = scalar(v)
			}
		case key == "args":
			if !given("args") {
				c.Args = list(v)
			}
		case key == "params":
			m, ok := v.(map[string]any)
			if !ok && v != nil {
				errs = append(errs, fmt.Errorf("params: give a mapping of the workload's parameters, name: value"))
			}
			for k, pv := range m {
				pending[k] = scalar(pv)
			}
		case fl.Lookup(string(NormalizePgbench(fl, key))) != nil:
			key = string(NormalizePgbench(fl, key))
			_, isList := fl.Lookup(key).Value.(pflag.SliceValue)
			if _, many := v.([]any); many && !isList {
				errs = append(errs, fmt.Errorf("%s: give one value, not a list", key))
				continue
			}
			if given(key) {
				continue
			}
			for _, s := range list(v) {
				if err := fl.Set(key, s); err != nil {
					errs = append(errs, fmt.Errorf("%s: %q: %v", key, s, err))
				}
			}
			if isList && len(list(v)) == 0 {
				_ = fl.Lookup(key).Value.(pflag.SliceValue).Replace(nil)
			}
		default:
			pending[key] = scalar(v)
		}
	}
	if len(pending) > 0 {
		errs = append(errs, c.setParams(pending, given))
	}
	return errors.Join(errs...)
}

// setParams adds the workload parameters in m (those not given) to c's
// Params, in the form the workload's flag prints.
func (c *Config) setParams(m map[string]string, given func(string) bool) error {
	meta, ok := workload.Get(c.Workload)
	if !ok {
		return fmt.Errorf("workload: name the workload (%s) for the keys %s", names(), strings.Join(sortedKeys(m), ", "))
	}
	fs := flagsOf(meta.New())
	var errs []error
	for _, k := range sortedKeys(c.Params) {
		if err := setParam(fs, k, c.Params[k]); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range sortedKeys(m) {
		if given(k) {
			continue
		}
		if fs.Lookup(k) == nil {
			errs = append(errs, fmt.Errorf("%s: not a run flag nor a parameter of %s", k, c.Workload))
			continue
		}
		if err := setParam(fs, k, m[k]); err != nil {
			errs = append(errs, err)
		}
	}
	c.Params = Params(fs)
	return errors.Join(errs...)
}

func flagsOf(w workload.Workload) *pflag.FlagSet {
	if f, ok := w.(workload.Flagser); ok {
		return f.Flags()
	}
	return pflag.NewFlagSet("none", pflag.ContinueOnError)
}

// Parse reads a run's arguments as the run command takes them, without a
// command tree: [WORKLOAD [ARGS...]] [flags]. A --config FILE among them
// is read with readFile first (--config-yaml TEXT is the document itself:
// a pod's arguments); the flags given override it. Without a workload only
// the run flags are known (a target for maintenance, say).
func Parse(args []string, readFile func(string) ([]byte, error)) (*Config, error) {
	c := &Config{}
	fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	c.AddFlags(fl)
	file, inline := "", ""
	fl.StringVar(&file, "config", "", "")
	fl.StringVar(&inline, "config-yaml", "", "")
	var data []byte
	if path := ConfigArg(args); path != "" {
		var err error
		if data, err = readFile(path); err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
		c.Workload = fileWorkload(data)
	} else if text := argValue(args, "--config-yaml"); text != "" {
		data, file = []byte(text), "(--config-yaml)"
		c.Workload = fileWorkload(data)
	}
	named := len(args) > 0 && !strings.HasPrefix(args[0], "-")
	if named {
		c.Workload, args = args[0], args[1:]
	}
	var fs *pflag.FlagSet
	if c.Workload != "" {
		meta, ok := workload.Get(c.Workload)
		if !ok {
			return nil, fmt.Errorf("unknown workload %q (available: %s)", c.Workload, names())
		}
		fs = flagsOf(meta.New())
		fs.VisitAll(func(f *pflag.Flag) {
			if workload.FlagApplies(f, "run") && fl.Lookup(f.Name) == nil {
				fl.AddFlag(f)
			}
		})
	}
	if err := fl.Parse(args); err != nil {
		return nil, err
	}
	c.Args = fl.Args()
	if fs != nil {
		c.Params = Params(fs)
	}
	if data != nil {
		given := func(k string) bool {
			f := fl.Lookup(k)
			return f != nil && f.Changed || k == "workload" && named || k == "args" && len(c.Args) > 0
		}
		if err := c.ApplyFile(data, given); err != nil {
			return nil, fmt.Errorf("--config %s: %w", file, err)
		}
	}
	return c, nil
}

// ConfigArg is the value of --config in args, "" without one.
func ConfigArg(args []string) string { return argValue(args, "--config") }

// HasConfig reports whether args give a configuration: --config FILE or
// --config-yaml TEXT.
func HasConfig(args []string) bool {
	return argValue(args, "--config") != "" || argValue(args, "--config-yaml") != ""
}

// argValue is the value of the flag name in args, "" without it.
func argValue(args []string, name string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// fileWorkload is the workload a config document names, "" if none.
func fileWorkload(data []byte) string {
	var doc struct {
		Workload string `yaml:"workload"`
	}
	_ = yaml.Unmarshal(data, &doc)
	return doc.Workload
}

// scalar is a YAML value as a flag value.
func scalar(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case time.Time:
		return v.Format(time.RFC3339Nano)
	case []any:
		s := make([]string, len(v))
		for i, e := range v {
			s[i] = scalar(e)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	return fmt.Sprint(v)
}

// list is a YAML value as the values of a repeatable flag: a list, or one
// scalar.
func list(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = scalar(e)
		}
		return out
	}
	return []string{scalar(v)}
}

func sortedAny(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
